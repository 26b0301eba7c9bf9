#include "simpler/view/strided_overlap.h"

#include <algorithm>
#include <numeric>

namespace simpler {

namespace {

// Walks the runs of `walked` that lie near `query`, depth first, stopping at the
// first run that shares a byte with `query` or when the budget runs out.
struct IntersectWalk {
    const NestedView& walked;
    const NestedView& query;
    uint64_t cap;
    uint64_t steps = 0;
    bool capped = false;

    // Block of level i at absolute byte offset o; its bytes lie in [o, o + span).
    bool block_intersects(uint32_t i, uint64_t o, uint64_t span) noexcept {
        if (++steps > cap) {
            capped = true;
            return false;
        }
        if (!nested_intersects(query, o, o + span, steps)) return false;
        if (i == walked.naxes) return true;  // a dense run that meets the query
        const uint64_t t = walked.stride[i];
        const uint64_t s = walked.inner_span[i];
        // Only blocks whose bounding interval meets [query.base, query.base + query.span).
        const uint64_t q_begin = query.base;
        const uint64_t q_end = query.base + query.span;
        uint64_t k_lo = 0;
        if (q_begin >= o + s) k_lo = (q_begin - o - s) / t + 1;
        if (q_end <= o) return false;
        const uint64_t k_hi = std::min(walked.count[i] - 1, (q_end - 1 - o) / t);
        for (uint64_t k = k_lo; k <= k_hi; ++k) {
            if (block_intersects(i + 1, o + k * t, s)) return true;
            if (capped) return false;
        }
        return false;
    }
};

// Visits every run of `entry` and asks whether `probe` (nested) contains it.
struct ContainWalk {
    const NestedView& entry;
    const NestedView& probe;
    uint64_t cap;
    uint64_t steps = 0;
    bool capped = false;

    bool all_contained(uint32_t i, uint64_t o) noexcept {
        if (++steps > cap) {
            capped = true;
            return false;
        }
        if (i == entry.naxes) return nested_contains(probe, o, o + entry.run, steps);
        for (uint64_t k = 0; k < entry.count[i]; ++k) {
            if (!all_contained(i + 1, o + k * entry.stride[i])) return false;
        }
        return true;
    }
};

// gcd of the outer byte strides of v; 0 when v is dense.
uint64_t lattice_step(const NestedView& v) noexcept {
    uint64_t g = 0;
    for (uint32_t i = 0; i < v.naxes; ++i) g = std::gcd(g, v.stride[i]);
    return g;
}

// Every byte of a view lies in base + [0, run) + g*Z for g the gcd of its outer
// strides, so modulo the gcd of both views' steps each occupies one circular
// interval of residues. Disjoint intervals prove the views disjoint.
bool residues_disjoint(const NestedView& p, const NestedView& e) noexcept {
    const uint64_t g = std::gcd(lattice_step(p), lattice_step(e));
    if (g == 0 || p.run >= g || e.run >= g) return false;
    const uint64_t d = (e.base % g + g - p.base % g) % g;  // e's first residue, relative to p's
    return d >= p.run && d + e.run <= g;
}

// One canonical form describes one byte set (a transposed view of a block and
// the block itself land here).
bool same_canonical_form(const NestedView& p, const NestedView& e) noexcept {
    if (p.base != e.base || p.run != e.run || p.naxes != e.naxes) return false;
    for (uint32_t i = 0; i < p.naxes; ++i)
        if (p.count[i] != e.count[i] || p.stride[i] != e.stride[i]) return false;
    return true;
}

}  // namespace

StridedDecision strided_overlap(const NestedView& probe, const NestedView& entry, uint64_t work_cap) noexcept {
    StridedDecision d;
    d.steps = 1;
    if (probe.span == 0 || entry.span == 0) return d;  // not built from a valid view
    if (residues_disjoint(probe, entry)) {
        d.decided = true;
        d.overlap = TensorOverlap::NONE;
        return d;
    }
    if (same_canonical_form(probe, entry) && probe.span != UINT64_MAX) {
        d.decided = true;
        d.overlap = TensorOverlap::COVERED;
        return d;
    }
    const NestedView* walked = nullptr;
    const NestedView* query = nullptr;
    if (probe.nested && entry.nested) {
        const bool probe_smaller = probe.run_count() <= entry.run_count();
        walked = probe_smaller ? &probe : &entry;
        query = probe_smaller ? &entry : &probe;
    } else if (probe.nested) {
        walked = &entry;
        query = &probe;
    } else if (entry.nested) {
        walked = &probe;
        query = &entry;
    } else {
        return d;
    }
    // A non-nested walked view may have saturated; it cannot be walked then.
    if (walked->span == UINT64_MAX || saturating_add(walked->base, walked->span) == UINT64_MAX) return d;
    d.decided = true;
    IntersectWalk shares{*walked, *query, work_cap};
    const bool shared = shares.block_intersects(0, walked->base, walked->span);
    d.steps = shares.steps;
    if (shares.capped) {
        d.reason = OverlapReason::WORK_CAP;
        return d;
    }
    if (!shared) {
        d.overlap = TensorOverlap::NONE;
        return d;
    }
    d.reason = OverlapReason::SHARED_BYTES;
    if (!probe.nested || entry.base < probe.base || entry.base + entry.span > probe.base + probe.span) return d;
    if (d.steps >= work_cap || entry.run_count() > work_cap - d.steps) return d;
    ContainWalk covers{entry, probe, work_cap - d.steps};
    const bool covered = covers.all_contained(0, entry.base);
    d.steps += covers.steps;
    if (covered && !covers.capped) {
        d.overlap = TensorOverlap::COVERED;
        d.reason = OverlapReason::NONE;
    }
    return d;
}

}  // namespace simpler
