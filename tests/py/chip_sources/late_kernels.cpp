// A chip library the tests register on a running Worker (tests/py/test_register_late.py):
// late.fill (tensors: one FLOAT32 view of rank 1; scalar 0: an f32's bits)
// has kernel late_fill write that value into every element of the view; the
// kernel has a C++ form and an OpenCL form, so it runs on either device.
#include <cstring>

#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static const char LATE_FILL_CL[] = R"CLC(
__kernel void late_fill(__global float* out, const simpler_view v, const ulong bits) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(v)) out[simpler_at(v, i)] = as_float((uint)bits);
}
)CLC";

static int32_t fill(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count != 1) return kernel_fail(a, "late_fill takes one tensor, one scalar");
    const Tensor& t = a->tensors[0];
    if (t.dtype != static_cast<uint8_t>(DataType::FLOAT32) || t.ndims != 1)
        return kernel_fail(a, "late_fill: the view must be FLOAT32 of rank 1");
    const auto bits = static_cast<uint32_t>(a->scalars[0]);
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    float* base = base_ptr<float>(t);
    for (uint32_t i = 0; i < t.shapes[0]; ++i) base[t.start_offset + uint64_t{i} * t.strides[0]] = value;
    return CHIP_OK;
}

static int32_t fill_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("late_fill", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 1 || o.scalar_count() != 1) return o.fail("late.fill takes one tensor, one scalar");
    return o.submit(k, {TaskArg{o.arg(0), TensorArgType::OUTPUT_EXISTING}}, {o.scalar(0)});
}

static const LibraryEntry ENTRIES[] = {
    kernel_entry("late_fill", fill),
    opencl_source_entry("late kernels", LATE_FILL_CL),
    orchestration_entry("late.fill", fill_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
