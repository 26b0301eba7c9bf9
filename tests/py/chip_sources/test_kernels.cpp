// Chip orchestrations the Python end-to-end tests build with
// ChipCallable.from_source, runnable on both devices: each does its host-side
// part (clocks, sleeps, files) in the orchestration and its writes in a kernel
// with a C++ form and an OpenCL form (TEST_KERNELS_CL), so a test runs the same
// on a simulated chip and on an OpenCL one.
//
// test.stamp (tensors: zero or more INPUT views, then one INT64 output view of
// at least 2 elements; scalar 0: milliseconds to sleep) reads CLOCK_MONOTONIC
// nanoseconds, sleeps, reads it again, and has kernel test_stamp write the two
// readings into output elements 0 (start) and 1 (end): overlapping [start, end]
// intervals prove two chips ran at once and disjoint ones that a dependency held
// the second back.
// test.fail (1 to 3 tensors, the last an output) launches test_fail, which
// fails: on a simulated chip with a fixed message ("test.fail: deliberate
// failure 42"), on an OpenCL chip at launch, as its OpenCL form declares one
// argument more than it is given (CL_INVALID_KERNEL_ARGS).
// test.rendezvous (tensors: a UINT8 INPUT holding a NUL-terminated directory
// path, at most one other INPUT view, an INT32 output view; scalars: this task's id 0 or 1, a timeout in
// milliseconds) creates <dir>/<id>, waits until <dir>/<other id> exists, then
// has kernel test_fill_i32 fill its output view with id + 1. Two such tasks
// finish only when both run at once; a task still waiting at the timeout fails
// instead of hanging.
// test.gate (tensors: a UINT8 INPUT holding a NUL-terminated file path, an
// output view of any type it leaves as it is; scalar 0: a timeout in
// milliseconds) waits until the file exists. A test names the output as an
// input of the task it wants held back, submits the rest of its graph, then
// creates the file: what runs after the gate is ordered after every submit.
// test.overrun (simulated chips only: a C++ kernel; tensors: zero or more INPUT
// views, then one output view of rank 1; scalar 0: a byte count n) sets every
// byte of its output's elements to 0x11, then writes 0xEE into the n bytes just
// past the view's last byte — outside its view, as a buggy kernel would.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static const char TEST_KERNELS_CL[] = R"CLC(
__kernel void test_stamp(__global long* out, const simpler_view v, const ulong start, const ulong end) {
    if (get_global_id(0) == 0) {
        out[simpler_at(v, 0)] = (long)start;
        out[simpler_at(v, 1)] = (long)end;
    }
}
__kernel void test_fill_i32(__global int* out, const simpler_view v, const ulong value) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(v)) out[simpler_at(v, i)] = (int)value;
}
__kernel void test_fail(__global long* out, const simpler_view v, const ulong code, const ulong never_given) {}
)CLC";

static int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(uint64_t ms) {
    timespec nap{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
    while (nanosleep(&nap, &nap) != 0) {}
}

// The C++ forms of the kernels.

static int32_t stamp(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count != 2) return kernel_fail(a, "test_stamp takes an output and 2 scalars");
    const Tensor& out = a->tensors[0];
    if (out.dtype != static_cast<uint8_t>(DataType::INT64) || out.ndims != 1 || out.shapes[0] < 2)
        return kernel_fail(a, "test_stamp: the output must be INT64 with at least 2 elements");
    int64_t* base = base_ptr<int64_t>(out);
    base[out.start_offset] = static_cast<int64_t>(a->scalars[0]);
    base[out.start_offset + out.strides[0]] = static_cast<int64_t>(a->scalars[1]);
    return CHIP_OK;
}

static int32_t fill_i32(const KernelArgs* a) {
    if (a->tensor_count != 1 || a->scalar_count != 1)
        return kernel_fail(a, "test_fill_i32 takes an output and a scalar");
    const Tensor& out = a->tensors[0];
    if (out.dtype != static_cast<uint8_t>(DataType::INT32))
        return kernel_fail(a, "test_fill_i32: the output must be INT32");
    const Tensor* const ts[1] = {&out};
    int32_t* o = base_ptr<int32_t>(out);
    const auto value = static_cast<int32_t>(a->scalars[0]);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* s, uint32_t len) {
        for (uint32_t j = 0; j < len; ++j) o[base[0] + uint64_t{j} * s[0]] = value;
    });
    return CHIP_OK;
}

static int32_t fail_kernel(const KernelArgs* a) { return kernel_fail(a, "test.fail: deliberate failure %d", 42); }

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

// The orchestrations.

// Reads entry tensor `i`, a UINT8 view holding a NUL-terminated path, into `path`.
static int32_t read_path(const Orchestration& o, int32_t i, char (&path)[512], const char* who) {
    const Tensor& t = o.arg(i);
    if (t.dtype != static_cast<uint8_t>(DataType::UINT8) || t.ndims != 1)
        return o.fail("%s: tensor %d must be a UINT8 vector holding a path", who, i);
    const uint64_t n = t.shapes[0] < sizeof path ? t.shapes[0] : sizeof path - 1;
    if (int32_t rc = o.read_entry(i, path, n); rc != CHIP_OK) return rc;
    path[n] = '\0';
    if (strnlen(path, n) == n)
        return o.fail("%s: the path is not terminated within %llu bytes", who, static_cast<unsigned long long>(n));
    return CHIP_OK;
}

// Waits until `path` exists; false past `timeout_ms`.
static bool wait_for_file(const char* path, uint64_t timeout_ms) {
    const int64_t deadline = monotonic_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
    while (access(path, F_OK) != 0) {
        if (monotonic_ns() > deadline) return false;
        sleep_ms(1);
    }
    return true;
}

static int32_t stamp_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test_stamp", &k); rc != CHIP_OK) return rc;
    const int32_t n = o.tensor_count();
    if (n < 1 || n > 3 || o.scalar_count() != 1) return o.fail("test.stamp takes 1 to 3 tensors and a scalar");
    const Tensor& out = o.arg(n - 1);
    if (out.dtype != static_cast<uint8_t>(DataType::INT64) || out.ndims != 1 || out.shapes[0] < 2)
        return o.fail("test.stamp: the output must be INT64 with at least 2 elements");
    const auto start = static_cast<uint64_t>(monotonic_ns());
    sleep_ms(o.scalar(0));
    const auto end = static_cast<uint64_t>(monotonic_ns());
    return o.submit(k, {{out, TensorArgType::OUTPUT_EXISTING}}, {start, end});
}

static int32_t fail_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test_fail", &k); rc != CHIP_OK) return rc;
    const int32_t n = o.tensor_count();
    if (n < 1 || n > 3) return o.fail("test.fail takes 1 to 3 tensors");
    return o.submit(k, {{o.arg(n - 1), TensorArgType::OUTPUT_EXISTING}}, {42});
}

static int32_t rendezvous_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test_fill_i32", &k); rc != CHIP_OK) return rc;
    const int32_t n_tensors = o.tensor_count();
    if (n_tensors < 2 || n_tensors > 3 || o.scalar_count() != 2)
        return o.fail("test.rendezvous takes 2 or 3 tensors, 2 scalars");
    const uint64_t me = o.scalar(0);
    if (me > 1) return o.fail("test.rendezvous: id must be 0 or 1");
    char path[512];
    if (int32_t rc = read_path(o, 0, path, "test.rendezvous"); rc != CHIP_OK) return rc;
    const size_t n = strlen(path);
    if (n + 3 > sizeof path) return o.fail("test.rendezvous: the directory path is too long");
    path[n] = '/';
    path[n + 1] = static_cast<char>('0' + me);
    path[n + 2] = '\0';
    const int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) return o.fail("test.rendezvous: cannot create %s", path);
    close(fd);
    path[n + 1] = static_cast<char>('0' + (1 - me));
    if (!wait_for_file(path, o.scalar(1)))
        return o.fail("test.rendezvous: task %u waited in vain for %s", static_cast<unsigned>(me), path);
    return o.submit(k, {{o.arg(n_tensors - 1), TensorArgType::OUTPUT_EXISTING}}, {me + 1});
}

static int32_t gate_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (o.tensor_count() != 2 || o.scalar_count() != 1) return o.fail("test.gate takes 2 tensors, 1 scalar");
    char path[512];
    if (int32_t rc = read_path(o, 0, path, "test.gate"); rc != CHIP_OK) return rc;
    if (!wait_for_file(path, o.scalar(0))) return o.fail("test.gate: %s never appeared", path);
    return CHIP_OK;
}

static int32_t overrun_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("test.overrun", &k); rc != CHIP_OK) return rc;
    const int32_t n = o.tensor_count();
    if (n < 1 || n > 3 || o.scalar_count() != 1) return o.fail("test.overrun takes 1 to 3 tensors and a scalar");
    TaskArg args[3];
    for (int32_t i = 0; i < n; ++i)
        args[i] = TaskArg{o.arg(i), i == n - 1 ? TensorArgType::OUTPUT_EXISTING : TensorArgType::INPUT};
    if (n == 1) return o.submit(k, {args[0]}, {o.scalar(0)});
    if (n == 2) return o.submit(k, {args[0], args[1]}, {o.scalar(0)});
    return o.submit(k, {args[0], args[1], args[2]}, {o.scalar(0)});
}

static const LibraryEntry ENTRIES[] = {
    kernel_entry("test_stamp", stamp),
    kernel_entry("test_fill_i32", fill_i32),
    kernel_entry("test_fail", fail_kernel),
    kernel_entry("test.overrun", overrun),
    opencl_source_entry("test kernels", TEST_KERNELS_CL),
    orchestration_entry("test.stamp", stamp_orch),
    orchestration_entry("test.fail", fail_orch),
    orchestration_entry("test.rendezvous", rendezvous_orch),
    orchestration_entry("test.gate", gate_orch),
    orchestration_entry("test.overrun", overrun_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
