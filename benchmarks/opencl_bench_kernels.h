// The OpenCL C of bench_opencl's two kernels, shared by the chip library
// (opencl_bench_kernels.cpp: the OpenCL forms an OpenCL chip launches) and the
// raw baseline in bench_opencl.cpp, so both launch the same kernel text.
//
// bench_empty does nothing (one work item per element of its view);
// bench_touch adds 1 to every element of a FLOAT32 view.
#pragma once

namespace simpler::bench {

inline constexpr const char* OPENCL_BENCH_KERNELS = R"CLC(
__kernel void bench_empty(__global const float* x, const simpler_view v) {}
__kernel void bench_touch(__global float* x, const simpler_view v) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(v)) x[simpler_at(v, i)] += 1.0f;
}
)CLC";

}  // namespace simpler::bench
