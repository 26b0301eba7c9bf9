// TensorArgType: the per-argument tag that drives dependency inference, and
// what each tag reads, writes and needs granted (docs/explanation/dependencies.md, "Tags").
// Tags are consumed at submit; they never cross a process boundary.
#pragma once

#include <cstdint>

#include "simpler/task_interface/buffer_enums.h"

namespace simpler {

enum class TensorArgType : int32_t {
    INPUT = 0,
    OUTPUT = 1,
    INOUT = 2,
    OUTPUT_EXISTING = 3,
    NO_DEP = 4,
};
inline constexpr int32_t TENSOR_ARG_TYPE_COUNT = 5;

static_assert(sizeof(TensorArgType) == 4);
static_assert(static_cast<int32_t>(TensorArgType::INPUT) == 0 && static_cast<int32_t>(TensorArgType::OUTPUT) == 1 &&
              static_cast<int32_t>(TensorArgType::INOUT) == 2 &&
              static_cast<int32_t>(TensorArgType::OUTPUT_EXISTING) == 3 &&
              static_cast<int32_t>(TensorArgType::NO_DEP) == 4);

constexpr bool is_known_tag(TensorArgType t) noexcept {
    return static_cast<int32_t>(t) >= 0 && static_cast<int32_t>(t) < TENSOR_ARG_TYPE_COUNT;
}
constexpr bool tag_reads(TensorArgType t) noexcept { return t == TensorArgType::INPUT || t == TensorArgType::INOUT; }
constexpr bool tag_writes(TensorArgType t) noexcept {
    return t == TensorArgType::OUTPUT || t == TensorArgType::OUTPUT_EXISTING || t == TensorArgType::INOUT;
}

const char* tensor_arg_type_name(TensorArgType t) noexcept;

// True when a backing granting `granted` may be named with tag `t`: INPUT needs
// READ, OUTPUT / OUTPUT_EXISTING need WRITE, INOUT needs READWRITE (READWRITE
// satisfies all), NO_DEP needs nothing.
constexpr bool tag_allowed(AccessMode granted, TensorArgType t) noexcept {
    switch (t) {
        case TensorArgType::INPUT: return access_grants(granted, AccessMode::READ);
        case TensorArgType::OUTPUT:
        case TensorArgType::OUTPUT_EXISTING: return access_grants(granted, AccessMode::WRITE);
        case TensorArgType::INOUT: return granted == AccessMode::READWRITE;
        case TensorArgType::NO_DEP: return true;
    }
    return false;
}

}  // namespace simpler
