#include "simpler/task_interface/field_refusal.h"

#include <utility>

namespace simpler {

FieldRefusal::FieldRefusal(std::string field, std::string rule)
    : std::invalid_argument(field + ": " + rule), field_(std::move(field)), rule_(std::move(rule)) {}

FieldRefusal FieldRefusal::within(const std::string& prefix) const { return FieldRefusal(prefix + field_, rule_); }

}  // namespace simpler
