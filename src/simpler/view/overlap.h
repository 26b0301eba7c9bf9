// overlap(probe, entry): do two views of one backing share bytes, and does the
// probe contain every byte of the entry? The two-stage answer of
// docs/explanation/dependencies.md, extended past one shared row-major layout where it stays
// exact and bounded.
//
//   stage 1 (O(1)): disjoint byte ranges -> NONE; a dense probe (its bytes are
//     its whole range, e.g. the whole backing) whose range contains the
//     entry's -> COVERED.
//   stage 2 (O(ndims)): both views in one row-major layout (same dtype, rank
//     and strides, innermost stride 1, each stride a multiple of the next,
//     neither wrapping a row) -> per-axis box intersection, exact.
//   different strides (OverlapOptions::exact_strides): the exact progression
//     walk of strided_overlap.h, capped at work_cap steps.
// Anything else is PARTIAL with the reason the exact models did not apply.
//
// Only NONE licenses dropping an edge; it is answered only when proven. A
// COVERED is answered only when every byte of the entry is a byte of the probe.
// Every PARTIAL carries a reason: SHARED_BYTES when a shared byte is proven,
// otherwise the fallback (DIFFERENT_DTYPE, DIFFERENT_RANK, DIFFERENT_STRIDES,
// NOT_ROW_MAJOR, OFF_LATTICE, WRAPS_ROW, WORK_CAP).
//
// Does not check that both views name one backing: the caller establishes it
// (wire_overlap.h's Tensor overload answers NONE for two different identities;
// the chip runtime compares resolved addresses). Total over any field values
// (nothing assumes validate_tensor ran), noexcept, no allocation.
#pragma once

#include <cstdint>

#include "simpler/view/tensor_overlap.h"
#include "simpler/view/view_box.h"

namespace simpler {

struct OverlapAnswer {
    TensorOverlap overlap = TensorOverlap::PARTIAL;
    OverlapReason reason = OverlapReason::NONE;  // set on every PARTIAL; NONE otherwise

    friend bool operator==(const OverlapAnswer&, const OverlapAnswer&) = default;
};

// Steps the different-stride decision may spend on one pair before it answers
// PARTIAL / WORK_CAP (a step is one block visited or one interval query level).
inline constexpr uint64_t OVERLAP_DEFAULT_WORK_CAP = 4096;

struct OverlapOptions {
    bool exact_strides = true;  // false: stop at stage 2, as docs/explanation/dependencies.md's base model
    uint64_t work_cap = OVERLAP_DEFAULT_WORK_CAP;
};

OverlapAnswer overlap(const ViewBox& probe, const ViewBox& entry, const OverlapOptions& options = {}) noexcept;

// True when a PARTIAL answer is a fallback rather than a proven shared byte.
constexpr bool is_fallback(const OverlapAnswer& a) noexcept {
    return a.overlap == TensorOverlap::PARTIAL && a.reason != OverlapReason::SHARED_BYTES;
}

}  // namespace simpler
