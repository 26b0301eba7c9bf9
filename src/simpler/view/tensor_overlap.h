// TensorOverlap: the answer to "do these two views of one backing share bytes?"
// typed so that only a proof can drop work — NONE (proven disjoint) is the only
// value that licenses dropping a dependency edge. OverlapReason says why a
// PARTIAL was answered: a proven shared byte, or which limit of the exact model
// made it a conservative fallback (docs/explanation/dependencies.md).
#pragma once

#include <cstdint>

namespace simpler {

enum class TensorOverlap : uint8_t {
    NONE = 0,     // proven disjoint
    PARTIAL = 1,  // share a byte, or cannot be compared exactly
    COVERED = 2,  // the probe contains every byte of the entry
};

enum class OverlapReason : uint8_t {
    NONE = 0,               // not a PARTIAL, or a PARTIAL with no further reason
    SHARED_BYTES = 1,       // proven to share at least one byte
    DIFFERENT_DTYPE = 2,
    DIFFERENT_RANK = 3,
    DIFFERENT_STRIDES = 4,
    NOT_ROW_MAJOR = 5,
    OFF_LATTICE = 6,
    WRAPS_ROW = 7,
    WORK_CAP = 8,           // the exact different-stride decision ran past its work cap
};

static_assert(sizeof(TensorOverlap) == 1);
static_assert(static_cast<uint8_t>(TensorOverlap::NONE) == 0 && static_cast<uint8_t>(TensorOverlap::PARTIAL) == 1 &&
              static_cast<uint8_t>(TensorOverlap::COVERED) == 2);

const char* tensor_overlap_name(TensorOverlap o) noexcept;
const char* overlap_reason_name(OverlapReason r) noexcept;

}  // namespace simpler
