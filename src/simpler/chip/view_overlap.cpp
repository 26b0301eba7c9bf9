#include "simpler/chip/view_overlap.h"

namespace simpler::chip {
namespace {

bool same_row_major_lattice(const Tensor& a, const Tensor& b) noexcept {
    if (a.dtype != b.dtype || a.ndims != b.ndims || a.ndims == 0 || a.ndims > MAX_TENSOR_DIMS) return false;
    const uint32_t n = a.ndims;
    if (a.strides[n - 1] != 1) return false;
    for (uint32_t i = 0; i < n; ++i)
        if (a.strides[i] != b.strides[i]) return false;
    for (uint32_t i = 0; i + 1 < n; ++i) {
        const uint64_t outer = a.strides[i];
        const uint64_t inner = a.strides[i + 1];
        if (outer % inner != 0) return false;
        // Each view's inner span must fit in one outer step (no row overlaps the next).
        if (uint64_t{a.shapes[i + 1]} * inner > outer || uint64_t{b.shapes[i + 1]} * inner > outer) return false;
    }
    return true;
}

// Per-axis coordinates of an element offset on the lattice; false when a view
// starting there would wrap past the end of an outer step.
bool decompose(const Tensor& t, uint64_t coords[MAX_TENSOR_DIMS]) noexcept {
    uint64_t rem = t.start_offset;
    for (uint32_t i = 0; i < t.ndims; ++i) {
        coords[i] = rem / t.strides[i];
        rem %= t.strides[i];
        if (i > 0) {
            const uint64_t room = t.strides[i - 1] / t.strides[i];
            if (coords[i] + t.shapes[i] > room) return false;
        }
    }
    return true;
}

}  // namespace

bool views_may_overlap(const Tensor& a, const Tensor& b) noexcept {
    if (a.addr != b.addr) return false;
    const uint64_t ea = a.element_size();
    const uint64_t eb = b.element_size();
    const uint64_t a0 = a.start_offset * ea;
    const uint64_t a1 = a0 + a.extent_elem_cache * ea;
    const uint64_t b0 = b.start_offset * eb;
    const uint64_t b1 = b0 + b.extent_elem_cache * eb;
    if (a1 <= b0 || b1 <= a0) return false;
    if (!same_row_major_lattice(a, b)) return true;
    uint64_t ca[MAX_TENSOR_DIMS] = {};
    uint64_t cb[MAX_TENSOR_DIMS] = {};
    if (!decompose(a, ca) || !decompose(b, cb)) return true;
    for (uint32_t i = 0; i < a.ndims; ++i) {
        if (ca[i] + a.shapes[i] <= cb[i] || cb[i] + b.shapes[i] <= ca[i]) return false;
    }
    return true;
}

}  // namespace simpler::chip
