#include "simpler/view/overlap.h"

#include <cstring>

#include "simpler/view/strided_overlap.h"

namespace simpler {

namespace {

// Why the pair does not share one row-major layout; NONE when it does.
OverlapReason shared_layout_reason(const ViewBox& p, const ViewBox& e) noexcept {
    if (p.dtype != e.dtype) return OverlapReason::DIFFERENT_DTYPE;
    if (p.ndims != e.ndims) return OverlapReason::DIFFERENT_RANK;
    if (std::memcmp(p.strides, e.strides, sizeof p.strides) != 0) return OverlapReason::DIFFERENT_STRIDES;
    if (p.layout_reason != OverlapReason::NONE) return p.layout_reason;
    return e.layout_reason;
}

// Stage 2: per-axis intersection of [origin, origin + shape) boxes.
OverlapAnswer box_intersection(const ViewBox& p, const ViewBox& e) noexcept {
    bool covers = true;
    for (uint32_t i = 0; i < p.ndims; ++i) {
        const uint64_t p_lo = p.origin[i], p_hi = p.origin[i] + p.shapes[i];
        const uint64_t e_lo = e.origin[i], e_hi = e.origin[i] + e.shapes[i];
        if (p_hi <= e_lo || e_hi <= p_lo) return {TensorOverlap::NONE, OverlapReason::NONE};
        if (p_lo > e_lo || p_hi < e_hi) covers = false;
    }
    if (covers) return {TensorOverlap::COVERED, OverlapReason::NONE};
    return {TensorOverlap::PARTIAL, OverlapReason::SHARED_BYTES};
}

}  // namespace

OverlapAnswer overlap(const ViewBox& probe, const ViewBox& entry, const OverlapOptions& options) noexcept {
    // Stage 1: byte ranges; touching ranges do not overlap.
    if (probe.end <= entry.begin || entry.end <= probe.begin) return {TensorOverlap::NONE, OverlapReason::NONE};
    if (probe.dense && probe.begin <= entry.begin && entry.end <= probe.end)
        return {TensorOverlap::COVERED, OverlapReason::NONE};
    // Stage 2: one shared row-major layout.
    const OverlapReason reason = shared_layout_reason(probe, entry);
    if (reason == OverlapReason::NONE) return box_intersection(probe, entry);
    // Different strides: exact where bounded.
    if (options.exact_strides) {
        const StridedDecision d = strided_overlap(nested_view_of(probe), nested_view_of(entry), options.work_cap);
        if (d.decided) return {d.overlap, d.reason};
    }
    return {TensorOverlap::PARTIAL, reason};
}

}  // namespace simpler
