// The exact different-stride decision: do two views of one backing whose
// layouts differ (a transposed view against a row block, a stepped slice
// against a contiguous one, different dtypes or ranks) share a byte, and does
// the probe contain every byte of the entry?
//
// Method: first a lattice test: modulo the gcd of both views' byte strides,
// each view occupies one interval of residues; disjoint residues prove NONE in
// O(ndims) (even bytes against odd bytes, whatever the shapes). Otherwise the
// dense runs of one view are enumerated, outermost axis first, and
// each block is asked of the other view's NestedView (nested_intersects), so a
// block whose bounding interval misses the other view is pruned whole. At
// least one of the two views must be nested; when both are, the one with fewer
// runs is enumerated. Containment enumerates every run of the entry and asks
// nested_contains of the probe, which must be nested.
//
// Bounded: every block visited and every query step counts against work_cap;
// past it the answer is PARTIAL with reason WORK_CAP. A proven shared byte is
// PARTIAL with SHARED_BYTES even when containment ran past the cap.
// Does not decide: two views that are both not nested (their axes interleave)
// and not split by the lattice test; the answer is then `undecided`.
#pragma once

#include <cstdint>

#include "simpler/view/nested_view.h"
#include "simpler/view/tensor_overlap.h"

namespace simpler {

struct StridedDecision {
    bool decided = false;                       // false: neither view is nested
    TensorOverlap overlap = TensorOverlap::PARTIAL;
    OverlapReason reason = OverlapReason::NONE;  // SHARED_BYTES or WORK_CAP on a PARTIAL
    uint64_t steps = 0;                         // work spent
};

StridedDecision strided_overlap(const NestedView& probe, const NestedView& entry, uint64_t work_cap) noexcept;

}  // namespace simpler
