// The geometry every strided view shares: rank cap, the saturating extent, and
// the geometry checks common to the wire Tensor and the resolved ChipTensor.
//
// A view is (ndims, shapes[5], strides[5], dtype) with u32 shapes and element
// strides. Its extent is 1 + sum((shape_i - 1) * stride_i) elements: the span
// from its first to one past its last element. Every value here may come off
// the wire, so all arithmetic saturates to TENSOR_EXTENT_UNREPRESENTABLE rather
// than wrapping; callers reject that value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "simpler/task_interface/validation_error.h"

namespace simpler {

inline constexpr uint32_t MAX_TENSOR_DIMS = 5;
inline constexpr uint64_t TENSOR_EXTENT_UNREPRESENTABLE = UINT64_MAX;

constexpr uint64_t saturating_add(uint64_t a, uint64_t b) noexcept {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

constexpr uint64_t saturating_mul(uint64_t a, uint64_t b) noexcept {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

// Extent in elements of a view whose active shapes are > 0; saturates to
// TENSOR_EXTENT_UNREPRESENTABLE. ndims is clamped to MAX_TENSOR_DIMS.
constexpr uint64_t view_extent_elements(const uint32_t* shapes, const uint32_t* strides, uint32_t ndims) noexcept {
    uint64_t span = 0;
    for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) {
        if (shapes[i] == 0) continue;
        span = saturating_add(span, saturating_mul(uint64_t{shapes[i]} - 1, strides[i]));
    }
    return saturating_add(span, 1);
}

// Extent in bytes; saturates to TENSOR_EXTENT_UNREPRESENTABLE.
constexpr uint64_t view_extent_bytes(const uint32_t* shapes, const uint32_t* strides, uint32_t ndims,
                                     uint32_t elem_size) noexcept {
    return saturating_mul(view_extent_elements(shapes, strides, ndims), elem_size);
}

// True when every active shape and stride is > 0 and every slot past ndims is
// zero; branch-free over the fixed five slots. Requires 1 <= ndims <= 5.
constexpr bool view_dims_well_formed(uint32_t ndims, const uint32_t* shapes, const uint32_t* strides) noexcept {
    uint32_t bad = 0;
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) {
        const uint32_t active = i < ndims;
        bad |= active & static_cast<uint32_t>((shapes[i] == 0) | (strides[i] == 0));
        bad |= (1 - active) & static_cast<uint32_t>((shapes[i] != 0) | (strides[i] != 0));
    }
    return bad == 0;
}

// Writes the row-major element strides of `shapes` (innermost 1; a zero shape
// counts as 1) into `strides`. Returns -1, or the first dimension whose stride
// does not fit u32 (then `strides` is partly written).
constexpr int32_t row_major_strides(std::span<const uint32_t> shapes, uint32_t* strides) noexcept {
    uint64_t stride = 1;
    for (size_t i = shapes.size(); i-- > 0;) {
        if (stride > UINT32_MAX) return static_cast<int32_t>(i);
        strides[i] = static_cast<uint32_t>(stride);
        stride *= shapes[i] ? shapes[i] : 1;
    }
    return -1;
}

// Checks, in order: 1 <= ndims <= 5; dtype known; then for each active dim
// shape > 0 and stride > 0; every slot past ndims zero. Byte-offset and bound
// rules differ per type and stay with each type's validator. `type` names the
// struct in the error.
ValidationError check_view_shape(const char* type, uint32_t ndims, const uint32_t* shapes, const uint32_t* strides,
                                 uint8_t dtype) noexcept;

}  // namespace simpler
