// Chip kernels the Python end-to-end tests build with ChipCallable.from_source:
// test.stamp records when it ran, test.fail fails on purpose.
//
// test.stamp (tensors: zero or more INPUT views, then one INT64 output view of
// at least 2 elements; scalar 0: milliseconds to sleep) writes
// CLOCK_MONOTONIC nanoseconds into output elements 0 (start) and 1 (end) with
// the sleep between, so overlapping [start, end] intervals prove two chips ran
// at once and disjoint ones that a dependency held the second back.
// test.fail (any tensors) returns a kernel error with a fixed message.
// test.rendezvous (tensors: a UINT8 INPUT holding a NUL-terminated directory
// path, an INT32 output view of rank <= 2; scalars: this task's id 0 or 1, a
// timeout in milliseconds) creates <dir>/<id>, waits until <dir>/<other id>
// exists, then fills its output view with id + 1. Two such tasks finish only
// when both run at once; a task still waiting at the timeout fails instead of
// hanging.
// test.gate (tensors: a UINT8 INPUT holding a NUL-terminated file path, an
// output view of any type it leaves as it is; scalar 0: a timeout in
// milliseconds) waits until the file exists. A test names the output as an
// input of the task it wants held back, submits the rest of its graph, then
// creates the file: what runs after the gate is ordered after every submit.
// test.overrun (tensors: zero or more INPUT views, then one output view of
// rank 1; scalar 0: a byte count n) sets every byte of its output's elements
// to 0x11, then writes 0xEE into the n bytes just past the view's last byte —
// outside its view, as a buggy kernel would.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(uint64_t ms);

static int32_t stamp(const KernelArgs* a) {
    if (a->tensor_count < 1 || a->scalar_count < 1) return kernel_fail(a, "test.stamp takes an output and a scalar");
    const Tensor& out = a->tensors[a->tensor_count - 1];
    if (out.dtype != static_cast<uint8_t>(DataType::INT64) || out.ndims != 1 || out.shapes[0] < 2)
        return kernel_fail(a, "test.stamp: the output must be INT64 with at least 2 elements");
    int64_t* base = base_ptr<int64_t>(out);
    base[out.start_offset] = monotonic_ns();
    sleep_ms(a->scalars[0]);
    base[out.start_offset + out.strides[0]] = monotonic_ns();
    return CHIP_OK;
}

static int32_t fail_kernel(const KernelArgs* a) { return kernel_fail(a, "test.fail: deliberate failure %d", 42); }

static void sleep_ms(uint64_t ms) {
    timespec nap{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
    while (nanosleep(&nap, &nap) != 0) {}
}

static int32_t rendezvous(const KernelArgs* a) {
    if (a->tensor_count != 2 || a->scalar_count != 2)
        return kernel_fail(a, "test.rendezvous takes 2 tensors, 2 scalars");
    const Tensor& dir = a->tensors[0];
    const Tensor& out = a->tensors[1];
    const uint64_t me = a->scalars[0];
    if (me > 1) return kernel_fail(a, "test.rendezvous: id must be 0 or 1");
    char path[512];
    const char* d = base_ptr<const char>(dir) + dir.start_offset;
    const size_t n = strnlen(d, dir.shapes[0]);
    if (n == dir.shapes[0] || n + 3 > sizeof path) return kernel_fail(a, "test.rendezvous: bad directory path");
    std::memcpy(path, d, n);
    path[n] = '/';
    path[n + 2] = '\0';
    path[n + 1] = static_cast<char>('0' + me);
    const int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) return kernel_fail(a, "test.rendezvous: cannot create %s", path);
    close(fd);
    path[n + 1] = static_cast<char>('0' + (1 - me));
    const int64_t deadline = monotonic_ns() + static_cast<int64_t>(a->scalars[1]) * 1000000;
    while (access(path, F_OK) != 0) {
        if (monotonic_ns() > deadline)
            return kernel_fail(a, "test.rendezvous: task %u waited in vain for %s", static_cast<unsigned>(me), path);
        sleep_ms(1);
    }
    const Tensor* const ts[1] = {&out};
    int32_t* o = base_ptr<int32_t>(out);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* s, uint32_t len) {
        for (uint32_t j = 0; j < len; ++j) o[base[0] + uint64_t{j} * s[0]] = static_cast<int32_t>(me + 1);
    });
    return CHIP_OK;
}

static int32_t rendezvous_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test.rendezvous", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 2 || o.scalar_count() != 2) return o.fail("test.rendezvous takes 2 tensors, 2 scalars");
    return o.submit(k, {{o.arg(0), TensorArgType::INPUT}, {o.arg(1), TensorArgType::OUTPUT_EXISTING}},
                    {o.scalar(0), o.scalar(1)});
}

static int32_t gate(const KernelArgs* a) {
    if (a->tensor_count != 2 || a->scalar_count != 1) return kernel_fail(a, "test.gate takes 2 tensors, 1 scalar");
    const Tensor& file = a->tensors[0];
    const char* path = base_ptr<const char>(file) + file.start_offset;
    if (strnlen(path, file.shapes[0]) == file.shapes[0]) return kernel_fail(a, "test.gate: the path is not terminated");
    const int64_t deadline = monotonic_ns() + static_cast<int64_t>(a->scalars[0]) * 1000000;
    while (access(path, F_OK) != 0) {
        if (monotonic_ns() > deadline) return kernel_fail(a, "test.gate: %s never appeared", path);
        sleep_ms(1);
    }
    return CHIP_OK;
}

static int32_t gate_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test.gate", &k); rc != CHIP_OK) return rc;
    if (o.tensor_count() != 2 || o.scalar_count() != 1) return o.fail("test.gate takes 2 tensors, 1 scalar");
    return o.submit(k, {{o.arg(0), TensorArgType::INPUT}, {o.arg(1), TensorArgType::OUTPUT_EXISTING}}, {o.scalar(0)});
}

// Submits kernel `name` once with every entry argument: the last one as
// OUTPUT_EXISTING, the others as INPUT, and every scalar.
static int32_t submit_all(const OrchestrationContext* ctx, const char* name) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id(name, &k); rc != CHIP_OK) return rc;
    const int32_t n = o.tensor_count();
    if (n < 1 || n > 3 || o.scalar_count() > 1) return o.fail("%s takes 1 to 3 tensors and at most 1 scalar", name);
    TaskArg args[3];
    for (int32_t i = 0; i < n; ++i)
        args[i] = TaskArg{o.arg(i), i == n - 1 ? TensorArgType::OUTPUT_EXISTING : TensorArgType::INPUT};
    const uint64_t ms = o.scalar_count() > 0 ? o.scalar(0) : 0;
    if (n == 1) return o.submit(k, {args[0]}, {ms});
    if (n == 2) return o.submit(k, {args[0], args[1]}, {ms});
    return o.submit(k, {args[0], args[1], args[2]}, {ms});
}

static int32_t overrun(const KernelArgs* a) {
    if (a->tensor_count < 1 || a->scalar_count < 1) return kernel_fail(a, "test.overrun takes an output and a scalar");
    const Tensor& out = a->tensors[a->tensor_count - 1];
    if (out.ndims != 1) return kernel_fail(a, "test.overrun: the output must be of rank 1");
    const uint64_t elem = data_type_element_size(out.dtype);
    unsigned char* base = base_ptr<unsigned char>(out);
    for (uint32_t i = 0; i < out.shapes[0]; ++i)
        std::memset(base + (out.start_offset + uint64_t{i} * out.strides[0]) * elem, 0x11, elem);
    const uint64_t end = (out.start_offset + uint64_t{out.shapes[0] - 1} * out.strides[0] + 1) * elem;
    std::memset(base + end, 0xEE, a->scalars[0]);
    return CHIP_OK;
}

static int32_t stamp_orch(const OrchestrationContext* ctx) { return submit_all(ctx, "test.stamp"); }
static int32_t overrun_orch(const OrchestrationContext* ctx) { return submit_all(ctx, "test.overrun"); }
static int32_t fail_orch(const OrchestrationContext* ctx) { return submit_all(ctx, "test.fail"); }

static const LibraryEntry ENTRIES[] = {
    kernel_entry("test.stamp", stamp),
    kernel_entry("test.fail", fail_kernel),
    orchestration_entry("test.stamp", stamp_orch),
    orchestration_entry("test.fail", fail_orch),
    kernel_entry("test.rendezvous", rendezvous),
    orchestration_entry("test.rendezvous", rendezvous_orch),
    kernel_entry("test.gate", gate),
    orchestration_entry("test.gate", gate_orch),
    kernel_entry("test.overrun", overrun),
    orchestration_entry("test.overrun", overrun_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
