// Chip kernels for the end-to-end tests of domain_kernel_api.h (tests/py/test_window_sync.py).
//
// test.window_notify (tensor: a UINT32 view of at least 1 element in this
// rank's window, OUTPUT_EXISTING; scalars: a value, then the domain context
// [rank, size, base...]) stores the value into the view's first element with
// window_notify.
// test.window_wait (tensor: a UINT32 view of at least 2 elements in this rank's
// window, OUTPUT_EXISTING; scalars: the peer rank to wait for, the value, a
// timeout in milliseconds, then the domain context) waits with window_wait on
// the word at the same offset as the view's first element in the peer's window
// (peer_address), then writes the value it saw into the view's second element;
// at the deadline it fails naming what it waited for.
#include "simpler/chip/domain_kernel_api.h"
#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int32_t notify(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count < 1) return kernel_fail(a, "test.window_notify: 1 tensor, a value");
    DomainContext ctx;
    if (int32_t rc = read_domain_context(a, 1, &ctx); rc != CHIP_OK) return rc;
    window_notify(a->tensors[0].data<uint32_t>(), static_cast<uint32_t>(a->scalars[0]));
    return CHIP_OK;
}

static int32_t wait(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count < 3)
        return kernel_fail(a, "test.window_wait: 1 tensor, a peer, a value, a timeout");
    DomainContext ctx;
    if (int32_t rc = read_domain_context(a, 3, &ctx); rc != CHIP_OK) return rc;
    const Tensor& own = a->tensors[0];
    if (own.numel() < 2 || own.strides[0] != 1) return kernel_fail(a, "test.window_wait: 2 dense UINT32 elements");
    const auto peer = static_cast<uint32_t>(a->scalars[0]);
    const auto value = static_cast<uint32_t>(a->scalars[1]);
    const auto timeout_ms = static_cast<uint32_t>(a->scalars[2]);
    uint32_t* mine = own.data<uint32_t>();
    const uint64_t theirs = peer_address(ctx, reinterpret_cast<uint64_t>(mine), peer);
    if (theirs == 0) return kernel_fail(a, "test.window_wait: rank %u is not in the domain", peer);
    uint32_t seen = 0;
    if (!window_wait(reinterpret_cast<const uint32_t*>(theirs), value, timeout_ms, &seen))
        return kernel_fail(a, "waited %u ms for rank %u's word at 0x%llx to reach %u: it is %u", timeout_ms, peer,
                           static_cast<unsigned long long>(theirs), value, seen);
    mine[1] = seen;
    return CHIP_OK;
}

// Submits the kernel of the same name once with the one tensor (OUTPUT_EXISTING) and every scalar.
static int32_t pass_through(const OrchestrationContext* ctx, const char* name) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id(name, &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 1 || o.scalar_count() > CORE_MAX_SCALAR_ARGS)
        return o.fail("%s takes 1 tensor and at most %d scalars", name, CORE_MAX_SCALAR_ARGS);
    const Tensor t = o.arg(0);
    const int32_t tag = static_cast<int32_t>(TensorArgType::OUTPUT_EXISTING);
    return ctx->ops->submit(ctx->runtime, k, &t, &tag, 1, ctx->scalars, static_cast<uint32_t>(o.scalar_count()));
}

static int32_t notify_orch(const OrchestrationContext* ctx) { return pass_through(ctx, "test.window_notify"); }
static int32_t wait_orch(const OrchestrationContext* ctx) { return pass_through(ctx, "test.window_wait"); }

static const LibraryEntry ENTRIES[] = {
    kernel_entry("test.window_notify", notify),
    kernel_entry("test.window_wait", wait),
    orchestration_entry("test.window_notify", notify_orch),
    orchestration_entry("test.window_wait", wait_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
