// A chip kernel that breaks its contract, for tests/py/test_grants.py:
// grants.scribble (tensors: one FLOAT32 view the host task tagged INPUT)
// has kernel grants_scribble store 9.0 into the view's first element anyway.
// Run zero-copy, the store reaches the host bytes' read-only mapping and
// faults: from the C++ form on a simulated chip, from the OpenCL form on an
// OpenCL device that shares host memory.
#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static const char SCRIBBLE_CL[] = R"CLC(
__kernel void grants_scribble(__global float* x, const simpler_view v) {
    if (get_global_id(0) == 0) x[simpler_at(v, 0)] = 9.0f;
}
)CLC";

static int32_t scribble(const KernelArgs* a) {
    if (a->tensor_count != 1) return kernel_fail(a, "grants_scribble takes one tensor");
    const Tensor& t = a->tensors[0];
    base_ptr<float>(t)[t.start_offset] = 9.0f;
    return CHIP_OK;
}

static int32_t scribble_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("grants_scribble", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 1) return o.fail("grants.scribble takes one tensor");
    return o.submit(k, {TaskArg{o.arg(0), TensorArgType::INPUT}}, {});
}

static const LibraryEntry ENTRIES[] = {
    kernel_entry("grants_scribble", scribble),
    opencl_source_entry("grants kernels", SCRIBBLE_CL),
    orchestration_entry("grants.scribble", scribble_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
