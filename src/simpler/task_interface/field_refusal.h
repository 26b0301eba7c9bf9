// FieldRefusal: a host-layer refusal of one field of a config struct, as a
// value — the field's dotted path (as the validator knows it:
// "runtime.core_threads"; a struct that validates a member prefixes it with
// within(): "WorkerConfig.chip_lane.chip.runtime.core_threads") and the rule
// it broke with the offending value ("must be in [1, 256] (got 0)").
//
// A std::invalid_argument (ValueError in Python, where the binding raises it as
// simpler.FieldRefused with .field and .rule), so a caller that words the
// refusal for its own user (a Worker keyword named otherwise than its field)
// reads the fields instead of editing the message. what() is
// "<field>: <rule>".
#pragma once

#include <stdexcept>
#include <string>

namespace simpler {

class FieldRefusal : public std::invalid_argument {
public:
    FieldRefusal(std::string field, std::string rule);

    [[nodiscard]] const std::string& field() const noexcept { return field_; }
    [[nodiscard]] const std::string& rule() const noexcept { return rule_; }
    // The same refusal seen from the struct that holds this one's at `prefix`
    // (e.g. "WorkerConfig.chip_lane.chip."): the field becomes prefix + field.
    [[nodiscard]] FieldRefusal within(const std::string& prefix) const;

private:
    std::string field_;
    std::string rule_;
};

}  // namespace simpler
