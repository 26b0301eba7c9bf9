// What a kernel sees: its working tensors (`Tensor`, see tensor.h) and scalars
// in a KernelArgs, the signature it is called through, and element-access
// helpers that honour strides. A kernel returns CHIP_OK or a failure status; a
// failing kernel writes its message with kernel_fail().
//
// FLOAT16 / BFLOAT16 elements convert with half_float.h (included). For a
// kernel in a communication domain, see domain_kernel_api.h.
//
// Header-only and C-ABI-shaped so a kernel library built outside the project
// (from source or prebuilt) links against nothing of simpler_core. Owns no
// memory; the runtime guarantees each tensor's view lies inside its backing and
// that counts are within the payload caps, nothing more (shapes agreeing between
// arguments is the kernel's to check).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "simpler/chip/half_float.h"
#include "simpler/chip/status.h"
#include "simpler/chip/tensor.h"

namespace simpler::chip {

inline constexpr uint32_t KERNEL_ERROR_CAPACITY = 256;

struct KernelArgs {
    const Tensor* tensors;    // tensor_count working tensors, in submit order
    const uint64_t* scalars;  // scalar_count raw 64-bit scalars
    uint32_t tensor_count;
    uint32_t scalar_count;
    uint32_t core_id;         // which core thread runs it (0-based)
    uint32_t error_capacity;  // bytes of `error`, terminator included
    char* error;              // where kernel_fail() writes the message
};

using KernelFn = int32_t (*)(const KernelArgs* args);

static_assert(std::is_standard_layout_v<KernelArgs> && std::is_trivially_copyable_v<KernelArgs>);
static_assert(sizeof(KernelArgs) == 40);
static_assert(offsetof(KernelArgs, tensors) == 0 && offsetof(KernelArgs, scalars) == 8);
static_assert(offsetof(KernelArgs, tensor_count) == 16 && offsetof(KernelArgs, scalar_count) == 20);
static_assert(offsetof(KernelArgs, core_id) == 24 && offsetof(KernelArgs, error_capacity) == 28);
static_assert(offsetof(KernelArgs, error) == 32);

// Writes a printf-style message for the runtime to report with the kernel's
// name and returns CHIP_ERR_KERNEL: `return kernel_fail(a, "bad shape %u", n);`.
__attribute__((format(printf, 2, 3))) inline int32_t kernel_fail(const KernelArgs* a, const char* fmt, ...) {
    if (a->error != nullptr && a->error_capacity > 0) {
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(a->error, a->error_capacity, fmt, ap);
        va_end(ap);
    }
    return CHIP_ERR_KERNEL;
}

// A float carried in a 64-bit scalar slot (low 32 bits, IEEE-754 bits).
inline float scalar_as_f32(uint64_t v) noexcept { return bits_float(static_cast<uint32_t>(v)); }
inline uint64_t f32_as_scalar(float f) noexcept { return float_bits(f); }

// A double carried in a 64-bit scalar slot (all 64 bits, IEEE-754 bits).
inline double scalar_as_f64(uint64_t v) noexcept {
    double d;
    std::memcpy(&d, &v, sizeof d);
    return d;
}
inline uint64_t f64_as_scalar(double d) noexcept {
    uint64_t v;
    std::memcpy(&v, &d, sizeof v);
    return v;
}

// Typed base pointer of a tensor's backing; index it with element offsets that
// already include start_offset (as for_each_row hands them out).
template <typename T>
inline T* base_ptr(const Tensor& t) noexcept {
    return reinterpret_cast<T*>(t.addr);
}

// Element offset (from the backing base) of the element at idx[0..ndims).
inline uint64_t element_offset(const Tensor& t, const uint32_t* idx) noexcept {
    uint64_t e = t.start_offset;
    for (uint32_t i = 0; i < t.ndims && i < MAX_TENSOR_DIMS; ++i) e += uint64_t{idx[i]} * t.strides[i];
    return e;
}

// True when a and b have the same rank and shapes.
inline bool same_shape(const Tensor& a, const Tensor& b) noexcept {
    if (a.ndims != b.ndims) return false;
    for (uint32_t i = 0; i < a.ndims && i < MAX_TENSOR_DIMS; ++i)
        if (a.shapes[i] != b.shapes[i]) return false;
    return true;
}

// Walks the rows (innermost dim) of N same-shaped tensors in lock step. For each
// row calls f(base, inner_stride, n): base[k] is the element offset of the row's
// first element in tensor k, inner_stride[k] its innermost stride, n the row
// length. Shapes come from ts[0]; the caller checks they agree.
template <size_t N, typename F>
inline void for_each_row(const Tensor* const (&ts)[N], F&& f) {
    const Tensor& s = *ts[0];
    const uint32_t nd = s.ndims < 1 ? 1 : (s.ndims > MAX_TENSOR_DIMS ? MAX_TENSOR_DIMS : s.ndims);
    const uint32_t inner = nd - 1;
    uint32_t inner_stride[N];
    for (size_t k = 0; k < N; ++k) inner_stride[k] = ts[k]->strides[inner];
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t base[N];
        for (size_t k = 0; k < N; ++k) {
            uint64_t e = ts[k]->start_offset;
            for (uint32_t i = 0; i < inner; ++i) e += uint64_t{idx[i]} * ts[k]->strides[i];
            base[k] = e;
        }
        f(static_cast<const uint64_t*>(base), static_cast<const uint32_t*>(inner_stride), s.shapes[inner]);
        // Odometer over the outer dims.
        uint32_t d = inner;
        while (d > 0) {
            --d;
            if (++idx[d] < s.shapes[d]) break;
            idx[d] = 0;
            if (d == 0) return;
        }
        if (inner == 0) return;
    }
}

}  // namespace simpler::chip
