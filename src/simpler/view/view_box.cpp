#include "simpler/view/view_box.h"

namespace simpler {

namespace {

OverlapReason row_major_fit(const Tensor& t, uint32_t elem, uint64_t* origin) noexcept {
    const uint32_t n = t.ndims;
    if (t.strides[n - 1] != 1) return OverlapReason::NOT_ROW_MAJOR;
    for (uint32_t i = 1; i < n; ++i)
        if (t.strides[i] == 0 || t.strides[i - 1] % t.strides[i] != 0) return OverlapReason::NOT_ROW_MAJOR;
    if (t.byte_offset % elem != 0) return OverlapReason::OFF_LATTICE;
    // Reference shape: A[i] = strides[i-1] / strides[i]; A[0] from the backing size.
    uint64_t rem = t.byte_offset / elem;
    for (uint32_t i = 0; i < n; ++i) {
        origin[i] = rem / t.strides[i];
        rem %= t.strides[i];
        const uint64_t bound = i == 0 ? (t.buffer.nbytes / elem) / t.strides[0] : t.strides[i - 1] / t.strides[i];
        if (saturating_add(origin[i], t.shapes[i]) > bound) return OverlapReason::WRAPS_ROW;
    }
    return OverlapReason::NONE;
}

}  // namespace

ViewBox make_view_box(const Tensor& t) noexcept {
    ViewBox b;
    b.begin = t.byte_offset;
    b.dtype = t.dtype;
    b.elem = data_type_element_size(t.dtype);
    if (b.elem == 0 || t.ndims < 1 || t.ndims > MAX_TENSOR_DIMS) {
        b.end = UINT64_MAX;
        b.bytes.nested = false;
        return b;
    }
    b.ndims = static_cast<uint8_t>(t.ndims);
    for (uint32_t i = 0; i < t.ndims; ++i) {
        if (t.shapes[i] == 0 || t.strides[i] == 0) {  // not a valid view: reach everything
            b.end = UINT64_MAX;
            b.bytes.nested = false;
            return b;
        }
        b.shapes[i] = t.shapes[i];
        b.strides[i] = t.strides[i];
    }
    b.end = saturating_add(t.byte_offset, view_extent_bytes(t.shapes, t.strides, t.ndims, b.elem));
    b.layout_reason = row_major_fit(t, b.elem, b.origin);
    b.bytes = make_nested_view(t.byte_offset, t.shapes, t.strides, t.ndims, b.elem);
    return b;
}

}  // namespace simpler
