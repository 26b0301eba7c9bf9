#include "simpler/view/view_box.h"

#include <bit>

namespace simpler {

namespace {

// Fills origin[] and answers NONE when the view fits the row-major model.
// Divisions by 1 and by the (power-of-two) element size are avoided.
OverlapReason row_major_fit(uint64_t byte_offset, uint64_t backing_bytes, const uint32_t* shapes,
                            const uint32_t* strides, uint32_t n, uint32_t elem, uint64_t* origin) noexcept {
    if (strides[n - 1] != 1) return OverlapReason::NOT_ROW_MAJOR;
    uint64_t ref[MAX_TENSOR_DIMS];  // reference shape A[i] for i >= 1
    for (uint32_t i = 1; i < n; ++i) {
        const uint32_t outer = strides[i - 1], inner = strides[i];
        if (inner == 1) {
            ref[i] = outer;
            continue;
        }
        ref[i] = outer / inner;
        if (outer - ref[i] * inner != 0) return OverlapReason::NOT_ROW_MAJOR;
    }
    const unsigned shift = static_cast<unsigned>(std::countr_zero(elem));
    if ((byte_offset & (elem - 1)) != 0) return OverlapReason::OFF_LATTICE;
    uint64_t rem = byte_offset >> shift;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t s = strides[i];
        if (s == 1) {
            origin[i] = rem;
            rem = 0;
        } else {
            origin[i] = rem / s;
            rem -= origin[i] * s;
        }
        const uint64_t reach = origin[i] + shapes[i];
        // Axis 0: reach <= A[0] = floor(floor(nbytes / elem) / strides[0]), checked by multiplying.
        const bool fits = i == 0 ? saturating_mul(reach, s) <= (backing_bytes >> shift) : reach <= ref[i];
        if (!fits) return OverlapReason::WRAPS_ROW;
    }
    return OverlapReason::NONE;
}

}  // namespace

ViewBox make_view_box(uint64_t byte_offset, uint64_t backing_bytes, uint8_t dtype, const uint32_t* shapes,
                      const uint32_t* strides, uint32_t ndims) noexcept {
    ViewBox b;
    b.begin = byte_offset;
    b.end = UINT64_MAX;
    b.dtype = dtype;
    b.elem = data_type_element_size(dtype);
    if (b.elem == 0 || ndims < 1 || ndims > MAX_TENSOR_DIMS) return b;  // reaches everything, fits nothing
    b.ndims = static_cast<uint8_t>(ndims);
    uint64_t next_dense_stride = 1;
    bool dense = true;
    uint64_t span = 0;  // elements, saturating
    for (uint32_t i = ndims; i-- > 0;) {
        const uint32_t shape = shapes[i], stride = strides[i];
        if (shape == 0 || stride == 0) return b;
        b.shapes[i] = shape;
        b.strides[i] = stride;
        span = saturating_add(span, saturating_mul(uint64_t{shape} - 1, stride));
        if (shape == 1) continue;
        if (stride != next_dense_stride) dense = false;
        next_dense_stride = saturating_mul(next_dense_stride, shape);
    }
    b.valid = true;
    b.end = saturating_add(byte_offset, saturating_mul(saturating_add(span, 1), b.elem));
    b.dense = dense && b.end != UINT64_MAX;
    b.layout_reason = row_major_fit(byte_offset, backing_bytes, shapes, strides, ndims, b.elem, b.origin);
    return b;
}

NestedView nested_view_of(const ViewBox& b) noexcept {
    if (!b.valid) return NestedView{};
    return make_nested_view(b.begin, b.shapes, b.strides, b.ndims, b.elem);
}

}  // namespace simpler
