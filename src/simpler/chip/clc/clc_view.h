// How a tensor reaches an OpenCL C kernel (on OpenCL, or CUDA through its
// dialect): two kernel arguments, the buffer (`__global T*`: the cl_mem, or
// the CUDA region's device pointer, holding the tensor's backing) and a
// `simpler_view` by value — the element offset of the view's first element in
// that buffer (the backing's place in the buffer plus the view's
// start_offset), its rank, dtype, shapes and strides (elements). Scalars
// follow the tensors as `ulong`s, the raw 64-bit values a C++ kernel gets (a
// FLOAT32 scalar in the low 32 bits: `as_float((uint)s)`).
//
// CLC_PRELUDE is the OpenCL C every program is built with: the
// simpler_view struct (the same bytes as ClcView) and helpers to walk a
// view — simpler_count (its elements), simpler_at (the buffer index of the
// element with a given row-major linear index), and FLOAT16 / BFLOAT16
// loads and stores that round to nearest even.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simpler/chip/tensor.h"

namespace simpler::chip::clc {

struct ClcView {
    uint64_t offset;  // elements from the buffer's start
    uint32_t ndims;
    uint32_t dtype;   // raw DataType
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t strides[MAX_TENSOR_DIMS];
};
static_assert(MAX_TENSOR_DIMS == 5 && sizeof(ClcView) == 56 && offsetof(ClcView, shapes) == 16);

// `t`'s view for a kernel, its backing `element_base` elements into its buffer.
inline ClcView view_of(const Tensor& t, uint64_t element_base) noexcept {
    ClcView v{};
    v.offset = element_base + t.start_offset;
    v.ndims = t.ndims;
    v.dtype = t.dtype;
    for (uint32_t d = 0; d < MAX_TENSOR_DIMS; ++d) {
        v.shapes[d] = d < t.ndims ? t.shapes[d] : 1;
        v.strides[d] = d < t.ndims ? t.strides[d] : 0;
    }
    return v;
}

inline constexpr const char* CLC_PRELUDE = R"CLC(
typedef struct {
    ulong offset;
    uint ndims;
    uint dtype;
    uint shapes[5];
    uint strides[5];
} simpler_view;

inline ulong simpler_count(const simpler_view v) {
    ulong n = 1;
    for (uint d = 0; d < v.ndims; ++d) n *= v.shapes[d];
    return n;
}

inline ulong simpler_at(const simpler_view v, ulong i) {
    ulong e = v.offset;
    for (int d = (int)v.ndims - 1; d >= 0; --d) {
        const ulong s = v.shapes[d];
        e += (i % s) * v.strides[d];
        i /= s;
    }
    return e;
}

inline float simpler_load_f16(__global const ushort* p, ulong e) { return vload_half(e, (__global const half*)p); }
inline void simpler_store_f16(__global ushort* p, ulong e, float x) { vstore_half_rte(x, e, (__global half*)p); }
inline float simpler_load_bf16(__global const ushort* p, ulong e) { return as_float(((uint)p[e]) << 16); }
inline void simpler_store_bf16(__global ushort* p, ulong e, float x) {
    uint b = as_uint(x);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u) {
        p[e] = (ushort)((b >> 16) | 0x0040u);  /* a NaN stays a quiet NaN */
        return;
    }
    b += 0x7fffu + ((b >> 16) & 1u);  /* round to nearest even */
    p[e] = (ushort)(b >> 16);
}
)CLC";

}  // namespace simpler::chip::clc
