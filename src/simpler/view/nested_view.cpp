#include "simpler/view/nested_view.h"

#include <algorithm>

namespace simpler {

namespace {

// Bytes spanned by level i of v: its blocks and everything inside them.
uint64_t level_span(const NestedView& v, uint32_t i) noexcept {
    if (i == v.naxes) return v.run;
    return saturating_add(saturating_mul(v.count[i] - 1, v.stride[i]), v.inner_span[i]);
}

// [a, b) is relative to level i, with 0 <= a < b <= level_span(v, i).
bool intersects_at(const NestedView& v, uint32_t i, uint64_t a, uint64_t b, uint64_t& steps) noexcept {
    ++steps;
    if (i == v.naxes) return true;  // the run is dense
    const uint64_t t = v.stride[i];
    const uint64_t s = v.inner_span[i];
    const uint64_t k_min = a < s ? 0 : (a - s) / t + 1;           // first block ending after a
    const uint64_t k_max = std::min(v.count[i] - 1, (b - 1) / t);  // last block starting before b
    if (k_min > k_max) return false;
    if (k_max - k_min >= 2) return true;  // a middle block lies wholly inside [a, b)
    for (uint64_t k = k_min;; k = k_max) {
        const uint64_t o = k * t;
        const uint64_t lo = std::max(a, o) - o;
        const uint64_t hi = std::min(b, o + s) - o;
        if (lo < hi && intersects_at(v, i + 1, lo, hi, steps)) return true;
        if (k == k_max) return false;
    }
}

// [a, b) is relative to level i, with a < b.
bool contains_at(const NestedView& v, uint32_t i, uint64_t a, uint64_t b, uint64_t& steps) noexcept {
    ++steps;
    if (b > level_span(v, i)) return false;
    if (i == v.naxes) return true;
    const uint64_t t = v.stride[i];
    const uint64_t s = v.inner_span[i];
    const uint64_t k0 = a / t;
    const uint64_t o = k0 * t;
    if (a - o >= s) return false;  // a falls in the gap after block k0
    if (b <= o + s) return contains_at(v, i + 1, a - o, b - o, steps);
    if (s < t) return false;  // [a, b) runs into the gap after block k0
    // Blocks abut (s == t). The level inside is never dense (it would have been
    // merged into the run), so [a, b) may touch two blocks at most.
    const uint64_t k_end = (b - 1) / t;
    if (k_end - k0 >= 2) return false;
    return contains_at(v, i + 1, a - o, s, steps) && contains_at(v, i + 1, 0, b - k_end * t, steps);
}

}  // namespace

uint64_t NestedView::run_count() const noexcept {
    uint64_t n = 1;
    for (uint32_t i = 0; i < naxes; ++i) n = saturating_mul(n, count[i]);
    return n;
}

NestedView make_nested_view(uint64_t byte_offset, const uint32_t* shapes, const uint32_t* strides, uint32_t ndims,
                            uint32_t elem_size) noexcept {
    NestedView v;
    v.base = byte_offset;
    v.run = elem_size == 0 ? 1 : elem_size;
    uint64_t n[MAX_TENSOR_DIMS];
    uint64_t t[MAX_TENSOR_DIMS];
    uint32_t m = 0;
    for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) {
        if (shapes[i] <= 1) continue;
        // Insertion sort, byte stride descending; equal strides keep their order.
        const uint64_t ti = uint64_t{strides[i]} * v.run;
        uint32_t j = m++;
        while (j > 0 && t[j - 1] < ti) {
            n[j] = n[j - 1];
            t[j] = t[j - 1];
            --j;
        }
        n[j] = shapes[i];
        t[j] = ti;
    }
    // Merge inner axes into the run while their blocks touch or overlap.
    while (m > 0 && t[m - 1] <= v.run) {
        --m;
        v.run = saturating_add(saturating_mul(n[m] - 1, t[m]), v.run);
    }
    v.naxes = m;
    uint64_t inner = v.run;
    v.nested = true;
    for (uint32_t i = m; i-- > 0;) {
        v.count[i] = n[i];
        v.stride[i] = t[i];
        v.inner_span[i] = inner;
        if (t[i] < inner) v.nested = false;
        inner = saturating_add(saturating_mul(n[i] - 1, t[i]), inner);
    }
    v.span = inner;
    if (v.span == UINT64_MAX || saturating_add(v.base, v.span) == UINT64_MAX) v.nested = false;
    return v;
}

bool nested_intersects(const NestedView& v, uint64_t begin, uint64_t end, uint64_t& steps) noexcept {
    const uint64_t lo = std::max(begin, v.base);
    const uint64_t hi = std::min(end, v.base + v.span);
    if (lo >= hi) return false;
    return intersects_at(v, 0, lo - v.base, hi - v.base, steps);
}

bool nested_contains(const NestedView& v, uint64_t begin, uint64_t end, uint64_t& steps) noexcept {
    if (begin < v.base || begin >= end) return false;
    return contains_at(v, 0, begin - v.base, end - v.base, steps);
}

}  // namespace simpler
