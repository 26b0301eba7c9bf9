// A C++ chip orchestration that launches an OpenCL C kernel by name
// (tests/py/test_opencl_device.py): ocl.saxpy_halves (x INPUT, y INOUT; scalar 0:
// an f32's bits) submits the kernel "saxpy" — an OpenCL C kernel the chip has
// loaded from a .cl source — once on each half of the rows, as two tasks.
#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int32_t saxpy_halves(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (o.tensor_count() != 2 || o.scalar_count() != 1) return o.fail("ocl.saxpy_halves takes x, y and a scalar");
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("saxpy", &k); rc != CHIP_OK) return rc;
    const uint32_t rows = o.arg(1).shapes[0];
    for (uint32_t begin : {0u, rows / 2}) {
        const uint32_t end = begin == 0 ? rows / 2 : rows;
        Tensor x, y;
        if (!make_row_tile(o.arg(0), begin, end, x) || !make_row_tile(o.arg(1), begin, end, y))
            return o.fail("ocl.saxpy_halves: cannot tile rows [%u, %u)", begin, end);
        if (int32_t rc = o.submit(k, {{x, TensorArgType::INPUT}, {y, TensorArgType::INOUT}}, {o.scalar(0)});
            rc != CHIP_OK)
            return rc;
    }
    return CHIP_OK;
}

static const LibraryEntry ENTRIES[] = {orchestration_entry("ocl.saxpy_halves", saxpy_halves)};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
