// A chip kernel library: the kernel example.axpb (y = a * x + b on one FLOAT32
// view; scalars a, b as f32_as_scalar bits) and the chip orchestration of the
// same name, which splits its 2-D arguments into one row tile per core and
// submits a kernel task for each (the chip runs them on its core threads).
// Everything it uses comes from simpler/chip/library_abi.h (simpler::kernel);
// it links nothing of the runtime.
#include "simpler/chip/library_abi.h"

using namespace simpler::chip;

namespace {

int32_t axpb(const KernelArgs* a) {
    if (a->tensor_count != 2 || a->scalar_count != 2) return kernel_fail(a, "example.axpb takes x, y, a, b");
    const Tensor& x = a->tensors[0];
    const Tensor& y = a->tensors[1];
    if (!same_shape(x, y)) return kernel_fail(a, "example.axpb: x and y differ in shape");
    if (x.dtype != static_cast<uint8_t>(DataType::FLOAT32) || y.dtype != static_cast<uint8_t>(DataType::FLOAT32))
        return kernel_fail(a, "example.axpb: FLOAT32 only");
    const float alpha = scalar_as_f32(a->scalars[0]);
    const float beta = scalar_as_f32(a->scalars[1]);
    const Tensor* const ts[2] = {&x, &y};
    const float* px = base_ptr<float>(x);
    float* py = base_ptr<float>(y);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* stride, uint32_t n) {
        for (uint32_t j = 0; j < n; ++j)
            py[base[1] + uint64_t{j} * stride[1]] = alpha * px[base[0] + uint64_t{j} * stride[0]] + beta;
    });
    return CHIP_OK;
}

int32_t axpb_orchestration(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (o.tensor_count() != 2 || o.scalar_count() != 2) return o.fail("example.axpb takes x, y, a, b");
    const Tensor& x = o.arg(0);
    const Tensor& y = o.arg(1);
    if (x.ndims != 2 || !same_shape(x, y)) return o.fail("example.axpb: x and y must be 2-D of one shape");
    uint32_t kernel = 0;
    if (int32_t rc = o.kernel_id("example.axpb", &kernel); rc != CHIP_OK) return rc;
    const uint32_t rows = x.shapes[0];
    const uint32_t tiles = o.core_count() < rows ? o.core_count() : rows;
    for (uint32_t t = 0; t < tiles; ++t) {
        const uint32_t begin = rows * t / tiles;
        const uint32_t end = rows * (t + 1) / tiles;
        Tensor x_tile, y_tile;
        if (!make_row_tile(x, begin, end, x_tile) || !make_row_tile(y, begin, end, y_tile))
            return o.fail("example.axpb: cannot tile rows %u..%u", begin, end);
        if (int32_t rc = o.submit(kernel, {{x_tile, TensorArgType::INPUT}, {y_tile, TensorArgType::OUTPUT_EXISTING}},
                                  {o.scalar(0), o.scalar(1)});
            rc != CHIP_OK)
            return rc;
    }
    return CHIP_OK;
}

const LibraryEntry ENTRIES[] = {
    kernel_entry("example.axpb", axpb),
    orchestration_entry("example.axpb", axpb_orchestration),
};

}  // namespace

SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
