// The chip library of bench_opencl: two orchestrations, each submitting one
// kernel that has a C++ form (simulated chips) and an OpenCL form (OpenCL
// chips), so one benchmark runs the same task on both devices.
//
// bench.empty (one FLOAT32 tensor) submits kernel bench_empty on it as an
// INPUT: a kernel that does nothing. bench.touch (one FLOAT32 tensor) submits
// kernel bench_touch on it as INOUT: every element gains 1, so a chain of n
// tasks leaves each element n above where it started and a lost task shows.
// The OpenCL forms are opencl_bench_kernels.h.
#include "benchmarks/opencl_bench_kernels.h"
#include "simpler/chip/library_abi.h"

using namespace simpler::chip;

namespace {

int32_t empty_kernel(const KernelArgs*) { return CHIP_OK; }

int32_t touch_kernel(const KernelArgs* a) {
    if (a->tensor_count != 1) return kernel_fail(a, "bench_touch takes one tensor");
    const Tensor& x = a->tensors[0];
    if (x.dtype != static_cast<uint8_t>(DataType::FLOAT32)) return kernel_fail(a, "bench_touch: FLOAT32 only");
    const Tensor* const ts[1] = {&x};
    float* p = base_ptr<float>(x);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* stride, uint32_t n) {
        for (uint32_t j = 0; j < n; ++j) p[base[0] + uint64_t{j} * stride[0]] += 1.0f;
    });
    return CHIP_OK;
}

// Submits `kernel` once on entry tensor 0 with tag `tag`.
int32_t one_task(const OrchestrationContext* ctx, const char* kernel, TensorArgType tag) {
    Orchestration o(ctx);
    if (o.tensor_count() != 1) return o.fail("%s takes one tensor", kernel);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id(kernel, &k); rc != CHIP_OK) return rc;
    return o.submit(k, {{o.arg(0), tag}});
}

int32_t empty_orchestration(const OrchestrationContext* ctx) {
    return one_task(ctx, "bench_empty", TensorArgType::INPUT);
}

int32_t touch_orchestration(const OrchestrationContext* ctx) {
    return one_task(ctx, "bench_touch", TensorArgType::INOUT);
}

const LibraryEntry ENTRIES[] = {
    kernel_entry("bench_empty", empty_kernel),
    kernel_entry("bench_touch", touch_kernel),
    opencl_source_entry("bench_opencl kernels", simpler::bench::OPENCL_BENCH_KERNELS),
    orchestration_entry("bench.empty", empty_orchestration),
    orchestration_entry("bench.touch", touch_orchestration),
};

}  // namespace

SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
