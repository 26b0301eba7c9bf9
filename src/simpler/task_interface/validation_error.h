// ValidationError: why a wire value was refused, as plain data.
//
// Validators on the decode path are noexcept and return one of these; the
// first failing check wins. It names the type, the field (with a slot index when
// the field is an array, and the blob element when the value came out of a blob),
// the rule, and the offending value. ok() means "no error". Holding only static
// strings and integers, it costs nothing to return on the success path.
// throw_if_invalid() is the host-layer bridge: std::invalid_argument (ValueError
// in Python) carrying message().
#pragma once

#include <cstdint>
#include <string>

namespace simpler {

struct ValidationError {
    const char* type = nullptr;   // "BufferDescriptor", "Tensor", "argument blob"; null when ok
    const char* field = nullptr;  // "magic", "shapes", "tensor_count"
    const char* rule = nullptr;   // "must be 0x5342"
    uint64_t got = 0;             // the offending value (meaningful when has_got)
    bool has_got = false;
    bool got_hex = false;
    bool got_signed = false;      // render got as int64_t
    uint64_t max = 0;             // the largest acceptable value (meaningful when has_max)
    bool has_max = false;
    int32_t slot = -1;            // index into an array field (shapes[2]); -1 when none
    int32_t element = -1;         // which tensor of a blob; -1 when none

    [[nodiscard]] constexpr bool ok() const noexcept { return type == nullptr; }

    // "Tensor.shapes[2]: must be > 0 (got 0)" or "... (got 304, max 295)", prefixed by "tensor[3]: " when
    // element >= 0. Empty when ok().
    [[nodiscard]] std::string message() const;

    static constexpr ValidationError fail(const char* type, const char* field, const char* rule) noexcept {
        ValidationError e;
        e.type = type;
        e.field = field;
        e.rule = rule;
        return e;
    }
    static constexpr ValidationError fail(const char* type, const char* field, const char* rule, uint64_t got,
                                          bool hex = false) noexcept {
        ValidationError e = fail(type, field, rule);
        e.got = got;
        e.has_got = true;
        e.got_hex = hex;
        return e;
    }
    constexpr ValidationError& at_slot(int32_t s) noexcept {
        slot = s;
        return *this;
    }
    constexpr ValidationError& at_element(int32_t i) noexcept {
        element = i;
        return *this;
    }
    constexpr ValidationError& with_max(uint64_t m) noexcept {
        max = m;
        has_max = true;
        return *this;
    }
    constexpr ValidationError& as_signed() noexcept {
        got_signed = true;
        return *this;
    }
};

// Throws std::invalid_argument(e.message()) unless e.ok().
void throw_if_invalid(const ValidationError& e);

}  // namespace simpler
