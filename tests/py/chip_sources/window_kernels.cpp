// A kernel that reaches a peer's window through a domain's context, for
// tests/py/test_domain.py:
// window.put_next (tensors: one FLOAT32 OUTPUT_EXISTING view, the range it
// writes, named only so that the engine orders it; scalars: the domain
// context [rank, size, base of rank 0, ..., base of rank size-1], then a byte
// offset into the window and an element count n) stores rank * 1000 + i into
// element i, i < n, of the FLOAT32 array at that offset of the window of rank
// (rank + 1) % size — an address it computes from the context alone — and
// fails when the named view is not exactly those bytes.
#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int32_t put_next(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count < 4)
        return kernel_fail(a, "window.put_next takes 1 tensor, 4+ scalars");
    const uint64_t rank = a->scalars[0];
    const uint64_t size = a->scalars[1];
    if (size == 0 || rank >= size || a->scalar_count != size + 4)
        return kernel_fail(a, "window.put_next: a context of rank %llu, size %llu, and %u scalars",
                           static_cast<unsigned long long>(rank), static_cast<unsigned long long>(size),
                           a->scalar_count);
    const uint64_t peer = (rank + 1) % size;
    const uint64_t offset = a->scalars[2 + size];
    const uint64_t n = a->scalars[3 + size];
    float* dst = reinterpret_cast<float*>(a->scalars[2 + peer] + offset);
    const Tensor& named = a->tensors[0];
    if (base_ptr<float>(named) + named.start_offset != dst || named.shapes[0] != n)
        return kernel_fail(a, "window.put_next: the named view is not the peer's bytes");
    for (uint64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(rank * 1000 + i);
    return CHIP_OK;
}

static int32_t put_next_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("window.put_next", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 1) return o.fail("window.put_next takes 1 tensor");
    const Tensor t = o.arg(0);
    const int32_t tag = static_cast<int32_t>(TensorArgType::OUTPUT_EXISTING);
    return ctx->ops->submit(ctx->runtime, k, &t, &tag, 1, ctx->scalars, static_cast<uint32_t>(ctx->scalar_count));
}

static const LibraryEntry ENTRIES[] = {
    kernel_entry("window.put_next", put_next),
    orchestration_entry("window.put_next", put_next_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
