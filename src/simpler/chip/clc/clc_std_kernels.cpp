#include "simpler/chip/clc/clc_std_kernels.h"

#include <cstdio>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

#include "simpler/chip/clc/clc_linalg_kernels.h"
#include "simpler/chip/clc/clc_scratch.h"
#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/dtype_bytes.h"
#include "simpler/chip/kernel_device.h"

namespace simpler::chip::clc {
namespace {

constexpr size_t MATMUL_TILE = 16;

constexpr const char* SOURCE = R"CLC(
#define SIMPLER_BINARY(NAME, T, OP)                                                              \
    __kernel void NAME(__global const T* x, const simpler_view vx, __global const T* y,         \
                       const simpler_view vy, __global T* z, const simpler_view vz) {            \
        const ulong i = get_global_id(0);                                                        \
        if (i >= simpler_count(vz)) return;                                                      \
        z[simpler_at(vz, i)] = x[simpler_at(vx, i)] OP y[simpler_at(vy, i)];                     \
    }
/* INT32 wraps modulo 2^32, as the C++ kernels' do: computed on the same bits as uint. */
SIMPLER_BINARY(std_vector_add_f32, float, +)
SIMPLER_BINARY(std_vector_add_i32, uint, +)
SIMPLER_BINARY(std_mul_f32, float, *)
SIMPLER_BINARY(std_mul_i32, uint, *)

__kernel void std_add_scalar_f32(__global const float* x, const simpler_view vx, __global float* z,
                                 const simpler_view vz, const ulong s) {
    const ulong i = get_global_id(0);
    if (i >= simpler_count(vz)) return;
    z[simpler_at(vz, i)] = x[simpler_at(vx, i)] + as_float((uint)s);
}

#define SIMPLER_COPY(NAME, T)                                                                    \
    __kernel void NAME(__global const T* x, const simpler_view vx, __global T* z,               \
                       const simpler_view vz) {                                                  \
        const ulong i = get_global_id(0);                                                        \
        if (i >= simpler_count(vz)) return;                                                      \
        z[simpler_at(vz, i)] = x[simpler_at(vx, i)];                                             \
    }
SIMPLER_COPY(std_copy_1, uchar)
SIMPLER_COPY(std_copy_2, ushort)
SIMPLER_COPY(std_copy_4, uint)
SIMPLER_COPY(std_copy_8, ulong)

/* std.sum_n: the accumulator (one element per output element, dense) takes the
   first term, adds the others in order, and is stored narrowed once. */
#define SIMPLER_SUM(SUFFIX, T, A, LOAD, STORE)                                                   \
    __kernel void std_sum_load_##SUFFIX(__global A* acc, const ulong base, __global const T* x,  \
                                        const simpler_view vx) {                                 \
        const ulong i = get_global_id(0);                                                        \
        if (i >= simpler_count(vx)) return;                                                      \
        acc[base + i] = LOAD(x, simpler_at(vx, i));                                              \
    }                                                                                            \
    __kernel void std_sum_add_##SUFFIX(__global A* acc, const ulong base, __global const T* x,   \
                                       const simpler_view vx) {                                  \
        const ulong i = get_global_id(0);                                                        \
        if (i >= simpler_count(vx)) return;                                                      \
        acc[base + i] += LOAD(x, simpler_at(vx, i));                                             \
    }                                                                                            \
    __kernel void std_sum_store_##SUFFIX(__global const A* acc, const ulong base, __global T* z, \
                                         const simpler_view vz) {                                \
        const ulong i = get_global_id(0);                                                        \
        if (i >= simpler_count(vz)) return;                                                      \
        STORE(z, simpler_at(vz, i), acc[base + i]);                                              \
    }
#define SIMPLER_PLAIN_LOAD(p, e) ((p)[e])
#define SIMPLER_PLAIN_STORE(p, e, v) ((p)[e] = (v))
SIMPLER_SUM(f32, float, float, SIMPLER_PLAIN_LOAD, SIMPLER_PLAIN_STORE)
SIMPLER_SUM(i32, uint, uint, SIMPLER_PLAIN_LOAD, SIMPLER_PLAIN_STORE)
SIMPLER_SUM(f16, ushort, float, simpler_load_f16, simpler_store_f16)
SIMPLER_SUM(bf16, ushort, float, simpler_load_bf16, simpler_store_bf16)

/* C = A @ B, any strides: 16x16 tiles of A and B staged in local memory. */
#define SIMPLER_TILE 16
#define SIMPLER_MATMUL(NAME, T)                                                                              \
    __kernel __attribute__((reqd_work_group_size(SIMPLER_TILE, SIMPLER_TILE, 1))) void NAME(                 \
        __global const T* A, const simpler_view va, __global const T* B, const simpler_view vb, __global T* C, \
        const simpler_view vc) {                                                                             \
        __local T As[SIMPLER_TILE][SIMPLER_TILE];                                                            \
        __local T Bs[SIMPLER_TILE][SIMPLER_TILE];                                                            \
        const ulong M = vc.shapes[0], N = vc.shapes[1], K = va.shapes[1];                                    \
        const ulong col = get_global_id(0), row = get_global_id(1);                                          \
        const uint lc = get_local_id(0), lr = get_local_id(1);                                               \
        T acc = 0;                                                                                           \
        for (ulong t = 0; t < K; t += SIMPLER_TILE) {                                                        \
            As[lr][lc] = (row < M && t + lc < K) ? A[va.offset + row * va.strides[0] + (t + lc) * va.strides[1]] \
                                                 : 0;                                                        \
            Bs[lr][lc] = (t + lr < K && col < N) ? B[vb.offset + (t + lr) * vb.strides[0] + col * vb.strides[1]] \
                                                 : 0;                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
            for (uint k = 0; k < SIMPLER_TILE; ++k) acc += As[lr][k] * Bs[k][lc];                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
        }                                                                                                    \
        if (row < M && col < N) C[vc.offset + row * vc.strides[0] + col * vc.strides[1]] = acc;              \
    }
SIMPLER_MATMUL(std_matmul_f32, float)

/* FLOAT64 where the device computes in double precision (cl_khr_fp64). */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
SIMPLER_BINARY(std_vector_add_f64, double, +)
SIMPLER_BINARY(std_mul_f64, double, *)
__kernel void std_add_scalar_f64(__global const double* x, const simpler_view vx, __global double* z,
                                 const simpler_view vz, const ulong s) {
    const ulong i = get_global_id(0);
    if (i >= simpler_count(vz)) return;
    z[simpler_at(vz, i)] = x[simpler_at(vx, i)] + as_double(s);
}
SIMPLER_SUM(f64, double, double, SIMPLER_PLAIN_LOAD, SIMPLER_PLAIN_STORE)
SIMPLER_MATMUL(std_matmul_f64, double)
#endif
#undef SIMPLER_TILE
)CLC";

const char* suffix_of(uint8_t dtype) noexcept {
    switch (dtype) {
        case F32: return "f32";
        case F64: return "f64";
        case I32: return "i32";
        case F16: return "f16";
        case BF16: return "bf16";
        default: return nullptr;
    }
}

uint64_t element_count(const Tensor& t) noexcept {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t.ndims && d < MAX_TENSOR_DIMS; ++d) n *= t.shapes[d];
    return n;
}

int32_t check_count(const KernelArgs& a, const char* name, uint32_t tensors, uint32_t scalars) {
    if (a.tensor_count != tensors || a.scalar_count < scalars)
        return kernel_fail(&a, "%s takes %u tensors and %u scalars (got %u and %u)", name, tensors, scalars,
                           a.tensor_count, a.scalar_count);
    return CHIP_OK;
}

int32_t binary(KernelDevice& device, const char* name, const char* stem, const KernelArgs& a) {
    if (int32_t rc = check_count(a, name, 3, 0); rc != CHIP_OK) return rc;
    const Tensor& x = a.tensors[0];
    const Tensor& y = a.tensors[1];
    const Tensor& z = a.tensors[2];
    if (!same_shape(x, y) || !same_shape(x, z)) return kernel_fail(&a, "%s: the three tensors' shapes differ", name);
    if (x.dtype != y.dtype || x.dtype != z.dtype) return kernel_fail(&a, "%s: the three tensors' dtypes differ", name);
    if (x.dtype != F32 && x.dtype != F64 && x.dtype != I32)
        return kernel_fail(&a, "%s: dtype %s is not supported (FLOAT32, FLOAT64, INT32)", name,
                           data_type_name(x.dtype));
    if (int32_t rc = check_fp64(device, a, name, x.dtype); rc != CHIP_OK) return rc;
    const size_t n = element_count(z);
    device.std_launch(std::string(stem) + "_" + suffix_of(x.dtype))->tensor(x).tensor(y).tensor(z).run(1, &n);
    return CHIP_OK;
}

int32_t add_scalar(KernelDevice& device, const KernelArgs& a) {
    if (int32_t rc = check_count(a, "std.add_scalar", 2, 1); rc != CHIP_OK) return rc;
    const Tensor& x = a.tensors[0];
    const Tensor& z = a.tensors[1];
    if (!same_shape(x, z)) return kernel_fail(&a, "std.add_scalar: the two tensors' shapes differ");
    if (x.dtype != z.dtype) return kernel_fail(&a, "std.add_scalar: the two tensors' dtypes differ");
    if (x.dtype != F32 && x.dtype != F64)
        return kernel_fail(&a, "std.add_scalar: dtype %s is not supported (FLOAT32, FLOAT64)", data_type_name(x.dtype));
    if (int32_t rc = check_fp64(device, a, "std.add_scalar", x.dtype); rc != CHIP_OK) return rc;
    const size_t n = element_count(z);
    device.std_launch(std::string("std_add_scalar_") + suffix_of(x.dtype))
        ->tensor(x)
        .tensor(z)
        .scalar(a.scalars[0])
        .run(1, &n);
    return CHIP_OK;
}

int32_t copy(KernelDevice& device, const KernelArgs& a) {
    if (int32_t rc = check_count(a, "std.copy", 2, 0); rc != CHIP_OK) return rc;
    const Tensor& src = a.tensors[0];
    const Tensor& dst = a.tensors[1];
    if (!same_shape(src, dst) || src.dtype != dst.dtype)
        return kernel_fail(&a, "std.copy: source and destination differ in shape or dtype");
    const uint32_t elem = src.element_size();
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
        return kernel_fail(&a, "std.copy: unsupported element size %u", elem);
    const size_t n = element_count(dst);
    device.std_launch("std_copy_" + std::to_string(elem))->tensor(src).tensor(dst).run(1, &n);
    return CHIP_OK;
}

int32_t matmul(KernelDevice& device, const KernelArgs& a) {
    if (int32_t rc = check_count(a, "std.matmul", 3, 0); rc != CHIP_OK) return rc;
    const Tensor& A = a.tensors[0];
    const Tensor& B = a.tensors[1];
    const Tensor& C = a.tensors[2];
    if (A.ndims != 2 || B.ndims != 2 || C.ndims != 2) return kernel_fail(&a, "std.matmul: 2-D tensors only");
    if (A.dtype != B.dtype || A.dtype != C.dtype)
        return kernel_fail(&a, "std.matmul: the three tensors' dtypes differ");
    if (A.dtype != F32 && A.dtype != F64)
        return kernel_fail(&a, "std.matmul: dtype %s is not supported (FLOAT32, FLOAT64)", data_type_name(A.dtype));
    if (int32_t rc = check_fp64(device, a, "std.matmul", A.dtype); rc != CHIP_OK) return rc;
    const uint32_t M = A.shapes[0], K = A.shapes[1], N = B.shapes[1];
    if (B.shapes[0] != K || C.shapes[0] != M || C.shapes[1] != N)
        return kernel_fail(&a, "std.matmul: shapes [%u,%u] @ [%u,%u] -> [%u,%u] do not agree", M, K, B.shapes[0], N,
                           C.shapes[0], C.shapes[1]);
    const size_t global[2] = {(N + MATMUL_TILE - 1) / MATMUL_TILE * MATMUL_TILE,
                              (M + MATMUL_TILE - 1) / MATMUL_TILE * MATMUL_TILE};
    const size_t local[2] = {MATMUL_TILE, MATMUL_TILE};
    device.std_launch(std::string("std_matmul_") + suffix_of(A.dtype))
        ->tensor(A)
        .tensor(B)
        .tensor(C)
        .run(2, global, local);
    return CHIP_OK;
}

int32_t sum_n(KernelDevice& device, const KernelArgs& a) {
    if (a.tensor_count < 2 || a.scalar_count > 1)
        return kernel_fail(&a,
                           "std.sum_n takes k >= 1 input tensors, one output and at most 1 scalar (got %u tensors "
                           "and %u scalars)",
                           a.tensor_count, a.scalar_count);
    const uint32_t k = a.tensor_count - 1;
    const Tensor& out = a.tensors[k];
    const uint64_t p = a.scalar_count == 1 ? a.scalars[0] : 0;
    if (p > uint64_t{k} + 1)
        return kernel_fail(&a, "std.sum_n: the output's place among the terms is %llu, past the %u terms",
                           static_cast<unsigned long long>(p), k + 1);
    const Tensor* terms[CORE_MAX_TENSOR_ARGS + 1];
    uint32_t nterms = 0;
    for (uint32_t q = 0; q < k; ++q) {
        const Tensor& x = a.tensors[q];
        if (!same_shape(x, out)) return kernel_fail(&a, "std.sum_n: input %u's shape differs from the output's", q);
        if (x.dtype != out.dtype)
            return kernel_fail(&a, "std.sum_n: input %u is %s, the output %s", q, data_type_name(x.dtype),
                               data_type_name(out.dtype));
        if (p == q + 1) terms[nterms++] = &out;
        terms[nterms++] = &x;
    }
    if (p == uint64_t{k} + 1) terms[nterms++] = &out;
    const char* suffix = suffix_of(out.dtype);
    if (suffix == nullptr)
        return kernel_fail(&a, "std.sum_n: dtype %s is not supported (FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT32)",
                           data_type_name(out.dtype));
    if (int32_t rc = check_fp64(device, a, "std.sum_n", out.dtype); rc != CHIP_OK) return rc;
    const size_t n = element_count(out);
    const uint32_t width = out.dtype == F64 ? 8 : 4;  // the accumulator: double, float, or uint for INT32
    const Scratch acc(device, n * width, "std.sum_n", "accumulator");
    const std::string s(suffix);
    for (uint32_t q = 0; q < nterms; ++q)
        device.std_launch((q == 0 ? "std_sum_load_" : "std_sum_add_") + s)
            ->buffer(acc.addr(), n * width, width)
            .tensor(*terms[q])
            .run(1, &n);
    device.std_launch("std_sum_store_" + s)->buffer(acc.addr(), n * width, width).tensor(out).run(1, &n);
    return CHIP_OK;
}

}  // namespace

int32_t check_fp64(const KernelDevice& device, const KernelArgs& a, const char* name, uint8_t dtype) {
    if (dtype == F64 && !device.has_fp64())
        return kernel_fail(&a, "%s: FLOAT64 needs double precision (cl_khr_fp64), which %s device '%s' lacks", name,
                           device.api_name(), device.facts().name.c_str());
    return CHIP_OK;
}

const char* std_kernels_source() noexcept {
    static const std::string source = std::string(SOURCE) + linalg_kernels_source();
    return source.c_str();
}

bool is_std_kernel(std::string_view name) noexcept {
    return name == "std.vector_add" || name == "std.mul" || name == "std.add_scalar" || name == "std.copy" ||
           name == "std.matmul" || name == "std.sum_n" || is_linalg_kernel(name);
}

int32_t launch_std_kernel(KernelDevice& device, std::string_view name, const KernelArgs& a) noexcept {
    try {
        if (name == "std.vector_add") return binary(device, "std.vector_add", "std_vector_add", a);
        if (name == "std.mul") return binary(device, "std.mul", "std_mul", a);
        if (name == "std.add_scalar") return add_scalar(device, a);
        if (name == "std.copy") return copy(device, a);
        if (name == "std.matmul") return matmul(device, a);
        if (name == "std.sum_n") return sum_n(device, a);
        if (is_linalg_kernel(name)) return launch_linalg_kernel(device, name, a);
        return kernel_fail(&a, "%.*s is not a standard kernel", static_cast<int>(name.size()), name.data());
    } catch (const std::exception& e) {
        return kernel_fail(&a, "on %s device '%s': %s", device.api_name(), device.facts().name.c_str(), e.what());
    }
}

}  // namespace simpler::chip::clc
