// The CUDA dialect of the kernels' OpenCL C: what NVRTC compiles before the
// OpenCL prelude (clc/clc_view.h: simpler_view and its helpers) and a
// kernel source, so one source serves both devices — the standard set's
// OpenCL C, and a user's .cu kernels, which take the same arguments as an
// OpenCL C kernel (a buffer pointer and a simpler_view by value per tensor,
// then each scalar as a 64-bit ulong) and may use the same helpers.
//
// About a dozen names carry the difference: the address-space qualifiers
// (__kernel is extern "C" __global__, __global is nothing, __local is
// __shared__), the work-item functions (get_global_id and friends over
// blockIdx, blockDim and threadIdx), barrier (__syncthreads, which orders
// the block's global and shared memory accesses both), the reinterpreting
// casts (as_float, as_uint, as_double), mad, the OpenCL scalar type names,
// and FLOAT16 loads and stores (vload_half, vstore_half_rte) as PTX
// conversions. Functions with no execution space are device functions
// (NVRTC's --device-as-default-execution-space). cl_khr_fp64 is defined:
// every CUDA device computes in double precision.
#pragma once

#include <string>

namespace simpler::chip::cuda {

inline constexpr const char* CUDA_DIALECT = R"CUDA(
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define reqd_work_group_size(X, Y, Z)
#define cl_khr_fp64 1
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(FLAGS) __syncthreads()
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short half;
inline ulong get_global_id(uint d) {
    return d == 0 ? (ulong)blockIdx.x * blockDim.x + threadIdx.x
         : d == 1 ? (ulong)blockIdx.y * blockDim.y + threadIdx.y
                  : (ulong)blockIdx.z * blockDim.z + threadIdx.z;
}
inline ulong get_local_id(uint d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
inline ulong get_local_size(uint d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
inline ulong get_group_id(uint d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
inline float as_float(uint x) { return __uint_as_float(x); }
inline uint as_uint(float x) { return __float_as_uint(x); }
inline double as_double(ulong x) { return __longlong_as_double((long long)x); }
inline float mad(float a, float b, float c) { return a * b + c; }
inline double mad(double a, double b, double c) { return a * b + c; }
inline float vload_half(ulong e, const half* p) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[e]));
    return f;
}
inline void vstore_half_rte(float x, ulong e, half* p) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    p[e] = h;
}
)CUDA";

// The text NVRTC compiles for an OpenCL C or .cu kernel source: the dialect,
// the OpenCL prelude, then `source` from its line 1.
std::string cuda_program_text(const std::string& source);

}  // namespace simpler::chip::cuda
