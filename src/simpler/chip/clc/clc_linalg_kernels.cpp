#include "simpler/chip/clc/clc_linalg_kernels.h"

#include <string>

#include "simpler/chip/clc/clc_scratch.h"
#include "simpler/chip/clc/clc_std_kernels.h"
#include "simpler/chip/dtype_bytes.h"
#include "simpler/chip/kernel_device.h"
#include "simpler/chip/std_linalg_args.h"

namespace simpler::chip::clc {
namespace {

constexpr size_t POTRF_GROUP = 64;

constexpr const char* SOURCE = R"CLC(
#define SIMPLER_AT(v, i, j) ((v).offset + (ulong)(i) * (v).strides[0] + (ulong)(j) * (v).strides[1])

/* C = alpha * op(A) * op(B) + beta * C; beta = 0 does not read C. */
#define SIMPLER_GEMM(S, T, FROM_BITS)                                                                   \
    __kernel void std_gemm_##S(__global const T* A, const simpler_view va, __global const T* B,         \
                               const simpler_view vb, __global T* C, const simpler_view vc,             \
                               const ulong ta, const ulong tb, const ulong alpha_bits,                  \
                               const ulong beta_bits) {                                                 \
        const ulong j = get_global_id(0), i = get_global_id(1);                                         \
        if (i >= vc.shapes[0] || j >= vc.shapes[1]) return;                                             \
        const ulong kn = ta ? va.shapes[0] : va.shapes[1];                                              \
        T s = 0;                                                                                        \
        for (ulong k = 0; k < kn; ++k)                                                                  \
            s += (ta ? A[SIMPLER_AT(va, k, i)] : A[SIMPLER_AT(va, i, k)]) *                             \
                 (tb ? B[SIMPLER_AT(vb, j, k)] : B[SIMPLER_AT(vb, k, j)]);                              \
        const T alpha = FROM_BITS(alpha_bits), beta = FROM_BITS(beta_bits);                             \
        __global T* c = C + SIMPLER_AT(vc, i, j);                                                       \
        *c = beta == 0 ? alpha * s : alpha * s + beta * *c;                                             \
    }

/* C = C - A * A^T on C's lower triangle. */
#define SIMPLER_SYRK(S, T)                                                                              \
    __kernel void std_syrk_##S(__global const T* A, const simpler_view va, __global T* C,               \
                               const simpler_view vc) {                                                 \
        const ulong j = get_global_id(0), i = get_global_id(1);                                         \
        if (i >= vc.shapes[0] || j > i) return;                                                         \
        T s = 0;                                                                                        \
        for (ulong q = 0; q < va.shapes[1]; ++q) s += A[SIMPLER_AT(va, i, q)] * A[SIMPLER_AT(va, j, q)]; \
        C[SIMPLER_AT(vc, i, j)] -= s;                                                                   \
    }

/* B = B * L^-T: row r of the result x solves x * L^T = b. */
#define SIMPLER_TRSM(S, T)                                                                              \
    __kernel void std_trsm_##S(__global const T* L, const simpler_view vl, __global T* B,               \
                               const simpler_view vb) {                                                 \
        const ulong r = get_global_id(0);                                                               \
        if (r >= vb.shapes[0]) return;                                                                  \
        for (ulong j = 0; j < vb.shapes[1]; ++j) {                                                      \
            T s = B[SIMPLER_AT(vb, r, j)];                                                              \
            for (ulong k = 0; k < j; ++k) s -= B[SIMPLER_AT(vb, r, k)] * L[SIMPLER_AT(vl, j, k)];      \
            B[SIMPLER_AT(vb, r, j)] = s / L[SIMPLER_AT(vl, j, j)];                                      \
        }                                                                                               \
    }

/* A = L * L^T on A's lower triangle, by one work group, column by column;
   info[info_at] = j + 1 when the leading minor of order j + 1 is not positive definite. */
#define SIMPLER_POTRF(S, T)                                                                             \
    __kernel void std_potrf_##S(__global T* A, const simpler_view va, __global int* info,               \
                                const ulong info_at) {                                                  \
        __local int failed;                                                                             \
        const ulong n = va.shapes[0], lid = get_local_id(0), step = get_local_size(0);                  \
        for (ulong j = 0; j < n; ++j) {                                                                 \
            if (lid == 0) {                                                                             \
                T d = A[SIMPLER_AT(va, j, j)];                                                          \
                for (ulong k = 0; k < j; ++k) d -= A[SIMPLER_AT(va, j, k)] * A[SIMPLER_AT(va, j, k)];   \
                failed = !(d > 0);                                                                      \
                if (failed)                                                                             \
                    info[info_at] = (int)(j + 1);                                                               \
                else                                                                                    \
                    A[SIMPLER_AT(va, j, j)] = sqrt(d);                                                  \
            }                                                                                           \
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                        \
            if (failed) return;                                                                         \
            const T l = A[SIMPLER_AT(va, j, j)];                                                        \
            for (ulong i = j + 1 + lid; i < n; i += step) {                                             \
                T s = A[SIMPLER_AT(va, i, j)];                                                          \
                for (ulong k = 0; k < j; ++k) s -= A[SIMPLER_AT(va, i, k)] * A[SIMPLER_AT(va, j, k)];   \
                A[SIMPLER_AT(va, i, j)] = s / l;                                                        \
            }                                                                                           \
            barrier(CLK_GLOBAL_MEM_FENCE);                                                              \
        }                                                                                               \
    }

#define SIMPLER_F32_BITS(x) as_float((uint)(x))
SIMPLER_GEMM(f32, float, SIMPLER_F32_BITS)
SIMPLER_SYRK(f32, float)
SIMPLER_TRSM(f32, float)
SIMPLER_POTRF(f32, float)

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
SIMPLER_GEMM(f64, double, as_double)
SIMPLER_SYRK(f64, double)
SIMPLER_TRSM(f64, double)
SIMPLER_POTRF(f64, double)
#endif
)CLC";

std::string variant(const char* stem, uint8_t dtype) { return std::string(stem) + (dtype == F64 ? "_f64" : "_f32"); }

int32_t potrf(KernelDevice& device, const KernelArgs& a) {
    const Tensor& A = a.tensors[0];
    const Scratch info(device, sizeof(int32_t), "std.potrf", "info word");
    const int32_t zero = 0;
    device.wait(device.copy_to_device(info.addr(), &zero, sizeof zero));
    const size_t group = POTRF_GROUP;
    device.std_launch(variant("std_potrf", A.dtype))
        ->tensor(A)
        .buffer(info.addr(), sizeof(int32_t), sizeof(int32_t))
        .run(1, &group, &group);
    int32_t result = 0;
    device.wait(device.copy_to_host(&result, info.addr(), sizeof result));
    return result == 0 ? CHIP_OK : potrf_failed(&a, result);
}

int32_t trsm(KernelDevice& device, const KernelArgs& a) {
    const size_t rows = a.tensors[1].shapes[0];
    device.std_launch(variant("std_trsm", a.tensors[0].dtype))->tensor(a.tensors[0]).tensor(a.tensors[1]).run(1, &rows);
    return CHIP_OK;
}

int32_t syrk(KernelDevice& device, const KernelArgs& a) {
    const Tensor& C = a.tensors[1];
    const size_t global[2] = {C.shapes[1], C.shapes[0]};
    device.std_launch(variant("std_syrk", C.dtype))->tensor(a.tensors[0]).tensor(C).run(2, global);
    return CHIP_OK;
}

int32_t gemm(KernelDevice& device, const KernelArgs& a) {
    const Tensor& C = a.tensors[2];
    const size_t global[2] = {C.shapes[1], C.shapes[0]};
    device.std_launch(variant("std_gemm", C.dtype))
        ->tensor(a.tensors[0])
        .tensor(a.tensors[1])
        .tensor(C)
        .scalar(a.scalars[0])
        .scalar(a.scalars[1])
        .scalar(a.scalars[2])
        .scalar(a.scalars[3])
        .run(2, global);
    return CHIP_OK;
}

}  // namespace

const char* linalg_kernels_source() noexcept { return SOURCE; }

bool is_linalg_kernel(std::string_view name) noexcept {
    return name == "std.potrf" || name == "std.trsm" || name == "std.syrk" || name == "std.gemm";
}

int32_t launch_linalg_kernel(KernelDevice& device, std::string_view name, const KernelArgs& a) {
    const std::string kernel(name);
    int32_t rc = CHIP_OK;
    if (name == "std.potrf") rc = check_potrf_args(&a);
    if (name == "std.trsm") rc = check_trsm_args(&a);
    if (name == "std.syrk") rc = check_syrk_args(&a);
    if (name == "std.gemm") rc = check_gemm_args(&a);
    if (rc != CHIP_OK) return rc;
    if (int32_t fp = check_fp64(device, a, kernel.c_str(), a.tensors[0].dtype); fp != CHIP_OK) return fp;
    if (name == "std.potrf") return potrf(device, a);
    if (name == "std.trsm") return trsm(device, a);
    if (name == "std.syrk") return syrk(device, a);
    return gemm(device, a);
}

}  // namespace simpler::chip::clc
