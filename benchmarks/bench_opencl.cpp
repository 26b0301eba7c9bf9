// OpenCL chips against raw OpenCL in one run: each Worker row beside the same
// kernel launched from this process with clEnqueueNDRangeKernel + clFinish on
// buffers of the same size (docs/benchmarks/opencl.md gives the goals and the
// verdicts).
//
// - Empty task: one bench.empty task (a kernel that does nothing, on a 64-float
//   device block) submitted and waited for, on a simulated chip and on an
//   OpenCL chip; raw: the same kernel enqueued and finished.
// - 64 MiB host -> device -> host: one bench.touch task (every element + 1) on
//   a 64 MiB fork-shared host buffer, staged in and out; raw: WriteBuffer, the
//   same kernel, ReadBuffer, finish.
// - std.matmul 1024^2 FLOAT32 on device blocks (the kernel alone) and on host
//   buffers (staged in and out each run); raw: std_matmul_f32, the standard
//   set's own OpenCL C, in 16x16 work groups over C.
// - 10,000 dependent tasks: bench.touch on one 64-float host view (each task
//   waits for the one before), alternating between 2 chips and on one chip, on
//   simulated and on OpenCL chips.
// Every Worker row checks its result after the timing loop.
//
// The raw rows run last (registration order) and open OpenCL in this process;
// a Worker forked after that would give its chips a copy of the driver's
// state without its threads, so the Worker rows refuse to run then.
//
// The OpenCL device is the first one the ICD loader lists (the one chip 0 of
// a Worker takes); SIMPLER_BENCH_PLATFORM keeps to platforms whose name
// contains it. The chip library is opencl_bench_kernels beside this program
// (SIMPLER_BENCH_KERNELS names another).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/worker_round_trip.h"
#include "simpler/backing/fork_owner.h"
#include "simpler/engine/worker.h"

#if SIMPLER_HAVE_OPENCL
#include "benchmarks/opencl_bench_kernels.h"
#include "simpler/chip/clc/clc_std_kernels.h"
#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/opencl/opencl_api.h"
#include "simpler/chip/opencl/opencl_platforms.h"
#endif

using namespace simpler;

namespace {

#if SIMPLER_HAVE_OPENCL

using chip::DeviceKind;
namespace cl = chip::opencl;

constexpr uint32_t MATMUL_N = 1024;
constexpr uint64_t STAGED_BYTES = 64ull << 20;
constexpr uint32_t CHAIN_TASKS = 10'000;
constexpr uint32_t SMALL = 64;  // elements of the empty task's and the chain's view

// Callable ids, in WorkerConfig order.
enum Callable : uint64_t { EMPTY = 0, TOUCH = 1, MATMUL = 2, COPY = 3 };

bool g_raw_opened = false;  // this process opened OpenCL (a raw row ran)

std::string platform_filter() {
    const char* p = std::getenv("SIMPLER_BENCH_PLATFORM");
    return p != nullptr ? p : "";
}

std::string kernel_library() {
    if (const char* p = std::getenv("SIMPLER_BENCH_KERNELS")) return p;
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / BENCH_KERNEL_LIBRARY_NAME).string();
}

DeviceKind kind_of(int64_t arg) { return arg == 0 ? DeviceKind::SIMULATED : DeviceKind::OPENCL; }
const char* kind_name(int64_t arg) { return arg == 0 ? "simulated" : "opencl"; }

WorkerConfig worker_config(int64_t device, uint32_t chips) {
    WorkerConfig c;
    c.num_chips = chips;
    c.chip_lane.chip.libraries = {kernel_library()};
    c.chip_lane.chip.orchestrations = {"bench.empty", "bench.touch", "std.matmul", "std.copy"};
    c.chip_lane.chip.device.kind = kind_of(device);
    c.chip_lane.chip.device.platform = platform_filter();
    return c;
}

// A Worker for one row, or nullptr with the row skipped saying why.
std::unique_ptr<Worker> start_worker(benchmark::State& state, int64_t device, uint32_t chips) {
    if (g_raw_opened) {
        state.SkipWithError(
            "a raw row opened OpenCL in this process before this Worker row; run the Worker rows first");
        return nullptr;
    }
    state.SetLabel(kind_name(device));
    auto w = std::make_unique<Worker>(worker_config(device, chips));
    w->init();
    return w;
}

Tensor vector_of(const BufferDescriptor& d, uint32_t n) {
    const uint32_t shape[1] = {n};
    return make_tensor(d, shape, DataType::FLOAT32);
}

Tensor square_of(const BufferDescriptor& d, uint32_t n) {
    const uint32_t shape[2] = {n, n};
    return make_tensor(d, shape, DataType::FLOAT32);
}

// Runs one task of `callable` on chip `chip` with `tensors` and waits for it.
void run_one(Worker& w, uint64_t callable, uint32_t chip,
             const std::vector<std::pair<Tensor, TensorArgType>>& tensors) {
    TaskArgs args;
    for (const auto& [t, tag] : tensors) args.add_tensor(t, tag);
    const MemberSubmit m{&args, chip};
    w.submit(TaskKind::NEXT_LEVEL, callable, {&m, 1}, TaskConfig{});
    w.wait();
}

// One untimed run of `callable` as `m` asks: a chip builds its OpenCL programs
// (or finds them in its cache) at its first launch of them.
void warm_up(Worker& w, uint64_t callable, const MemberSubmit& m) {
    w.submit(TaskKind::NEXT_LEVEL, callable, {&m, 1}, TaskConfig{});
    w.wait();
}

void fill_matrix(float* p, uint32_t n, uint32_t seed) {
    for (uint64_t i = 0; i < uint64_t{n} * n; ++i) p[i] = static_cast<float>((i * 2654435761u + seed) % 17) - 8.0f;
}

// True when rows 0, 1, n/2 and n-1 of C equal A @ B (to FLOAT32 rounding).
bool matmul_matches(const float* A, const float* B, const float* C, uint32_t n) {
    for (uint32_t i : {0u, 1u, n / 2, n - 1})
        for (uint32_t j = 0; j < n; ++j) {
            double s = 0;
            for (uint32_t k = 0; k < n; ++k) s += double{A[uint64_t{i} * n + k]} * B[uint64_t{k} * n + j];
            if (std::fabs(s - C[uint64_t{i} * n + j]) > 1e-3 * (1 + std::fabs(s))) return false;
        }
    return true;
}

void BM_WorkerEmptyTask(benchmark::State& state) {
    auto w = start_worker(state, state.range(0), 1);
    if (!w) return;
    const DeviceBacking block = w->alloc_device(0, SMALL * sizeof(float));
    TaskArgs args;
    args.add_tensor(vector_of(block.descriptor, SMALL), TensorArgType::INPUT);
    const MemberSubmit m{&args, 0};
    warm_up(*w, EMPTY, m);
    bench::worker_round_trips(state, *w, TaskKind::NEXT_LEVEL, m, EMPTY);
    w->close();
}

void BM_WorkerStagedRoundTrip64MiB(benchmark::State& state) {
    const auto host = ForkOwner::create_shared(STAGED_BYTES);  // before init(), which forks the chip
    auto w = start_worker(state, state.range(0), 1);
    if (!w) return;
    const auto n = static_cast<uint32_t>(STAGED_BYTES / sizeof(float));
    auto* x = reinterpret_cast<float*>(host->data());
    std::fill(x, x + n, 0.0f);
    TaskArgs args;
    args.add_tensor(vector_of(host->descriptor(), n), TensorArgType::INOUT);
    const MemberSubmit m{&args, 0};
    warm_up(*w, TOUCH, m);
    bench::worker_round_trips(state, *w, TaskKind::NEXT_LEVEL, m, TOUCH);
    w->close();
    const auto want = static_cast<float>(state.iterations() + 1);
    for (uint32_t i = 0; i < n; i += 4093)
        if (x[i] != want) return state.SkipWithError("a staged element did not come back touched once a run");
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * STAGED_BYTES));
}

// range(1): 0 runs on device blocks (the kernel alone), 1 on host buffers
// staged in and out each run.
void BM_WorkerMatmul(benchmark::State& state) {
    const uint64_t bytes = uint64_t{MATMUL_N} * MATMUL_N * sizeof(float);
    const auto hA = ForkOwner::create_shared(bytes), hB = ForkOwner::create_shared(bytes),
               hC = ForkOwner::create_shared(bytes);
    auto w = start_worker(state, state.range(0), 1);
    if (!w) return;
    const bool on_host = state.range(1) == 1;
    state.SetLabel(std::string(kind_name(state.range(0))) + (on_host ? ", host buffers staged" : ", device blocks"));
    auto* A = reinterpret_cast<float*>(hA->data());
    auto* B = reinterpret_cast<float*>(hB->data());
    auto* C = reinterpret_cast<float*>(hC->data());
    fill_matrix(A, MATMUL_N, 1);
    fill_matrix(B, MATMUL_N, 7);
    Tensor a = square_of(hA->descriptor(), MATMUL_N), b = square_of(hB->descriptor(), MATMUL_N),
           c = square_of(hC->descriptor(), MATMUL_N);
    const Tensor host_c = c;
    if (!on_host) {
        const DeviceBacking dA = w->alloc_device(0, bytes), dB = w->alloc_device(0, bytes),
                            dC = w->alloc_device(0, bytes);
        run_one(*w, COPY, 0,
                {{a, TensorArgType::INPUT}, {square_of(dA.descriptor, MATMUL_N), TensorArgType::OUTPUT_EXISTING}});
        run_one(*w, COPY, 0,
                {{b, TensorArgType::INPUT}, {square_of(dB.descriptor, MATMUL_N), TensorArgType::OUTPUT_EXISTING}});
        a = square_of(dA.descriptor, MATMUL_N);
        b = square_of(dB.descriptor, MATMUL_N);
        c = square_of(dC.descriptor, MATMUL_N);
    }
    TaskArgs args;
    args.add_tensor(a, TensorArgType::INPUT);
    args.add_tensor(b, TensorArgType::INPUT);
    args.add_tensor(c, TensorArgType::OUTPUT_EXISTING);
    const MemberSubmit m{&args, 0};
    warm_up(*w, MATMUL, m);
    bench::worker_round_trips(state, *w, TaskKind::NEXT_LEVEL, m, MATMUL);
    if (!on_host) run_one(*w, COPY, 0, {{c, TensorArgType::INPUT}, {host_c, TensorArgType::OUTPUT_EXISTING}});
    w->close();
    if (!matmul_matches(A, B, C, MATMUL_N)) return state.SkipWithError("C differs from A @ B");
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * MATMUL_N * MATMUL_N * MATMUL_N * 1e-9 * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
}

void BM_WorkerDependentTasks(benchmark::State& state) {
    const auto host = ForkOwner::create_shared(SMALL * sizeof(float));
    const auto chips = static_cast<uint32_t>(state.range(1));
    auto w = start_worker(state, state.range(0), chips);
    if (!w) return;
    auto* x = reinterpret_cast<float*>(host->data());
    std::fill(x, x + SMALL, 0.0f);
    TaskArgs args;
    args.add_tensor(vector_of(host->descriptor(), SMALL), TensorArgType::INOUT);
    const MemberSubmit lanes[2] = {{&args, 0}, {&args, chips - 1}};  // alternating between 2 chips, or on one
    warm_up(*w, TOUCH, lanes[0]);
    warm_up(*w, TOUCH, lanes[1]);
    for (auto _ : state) {
        for (uint32_t i = 0; i < CHAIN_TASKS; ++i)
            w->submit(TaskKind::NEXT_LEVEL, TOUCH, {&lanes[i & 1], 1}, TaskConfig{});
        w->wait();
    }
    w->close();
    const auto want = static_cast<float>(state.iterations() * CHAIN_TASKS + 2);
    for (uint32_t i = 0; i < SMALL; ++i)
        if (x[i] != want) return state.SkipWithError("an element was not touched once by every task of the chain");
    state.SetItemsProcessed(state.iterations() * CHAIN_TASKS);
}

// The raw baseline: the device chip 0 would take, one context, one in-order
// queue, the standard set's and bench_opencl's kernels in one program, built
// with the options a chip builds with.
class RawOpenCl {
public:
    static RawOpenCl& get() {
        static RawOpenCl raw;
        return raw;
    }
    const cl::OpenClApi& api() const { return cl_; }
    cl_command_queue queue() const { return queue_; }

    cl_mem buffer(size_t bytes) {
        cl_int rc = CL_SUCCESS;
        cl_mem m = cl_.CreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
        check(rc, "clCreateBuffer");
        return m;
    }
    cl_kernel kernel(const char* name) {
        cl_int rc = CL_SUCCESS;
        cl_kernel k = cl_.CreateKernel(program_, name, &rc);
        check(rc, name);
        return k;
    }
    void check(cl_int rc, const std::string& what) const {
        if (rc != CL_SUCCESS) throw std::runtime_error("raw OpenCL: " + what + ": " + cl::cl_error_name(rc));
    }

private:
    RawOpenCl() : cl_(cl::opencl_api()) {
        g_raw_opened = true;
        const cl::OpenClDeviceInfo info = cl::find_opencl_devices(platform_filter()).at(0);
        const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                               reinterpret_cast<cl_context_properties>(info.platform), 0};
        cl_int rc = CL_SUCCESS;
        context_ = cl_.CreateContext(props, 1, &info.device, nullptr, nullptr, &rc);
        check(rc, "clCreateContext");
        queue_ = cl_.CreateCommandQueue(context_, info.device, 0, &rc);
        check(rc, "clCreateCommandQueue");
        const std::string text = std::string(simpler::chip::clc::CLC_PRELUDE) +
                                 simpler::chip::clc::std_kernels_source() + bench::OPENCL_BENCH_KERNELS;
        const char* src = text.c_str();
        program_ = cl_.CreateProgramWithSource(context_, 1, &src, nullptr, &rc);
        check(rc, "clCreateProgramWithSource");
        check(cl_.BuildProgram(program_, 1, &info.device, "-cl-std=CL1.2", nullptr, nullptr), "clBuildProgram");
    }
    const cl::OpenClApi& cl_;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    cl_program program_ = nullptr;  // lives as long as the process
};

simpler::chip::clc::ClcView dense_view(uint32_t rows, uint32_t cols) {
    simpler::chip::clc::ClcView v{};
    v.ndims = rows == 1 ? 1 : 2;
    v.dtype = static_cast<uint32_t>(DataType::FLOAT32);
    for (uint32_t d = 0; d < MAX_TENSOR_DIMS; ++d) v.shapes[d] = 1;
    if (rows == 1) {
        v.shapes[0] = cols;
        v.strides[0] = 1;
    } else {
        v.shapes[0] = rows;
        v.shapes[1] = cols;
        v.strides[0] = cols;
        v.strides[1] = 1;
    }
    return v;
}

// Sets kernel arguments (buffer, view) for each of `buffers` in order.
void set_tensor_args(RawOpenCl& raw, cl_kernel k,
                     std::initializer_list<std::pair<cl_mem, simpler::chip::clc::ClcView>> buffers) {
    cl_uint i = 0;
    for (const auto& [mem, view] : buffers) {
        raw.check(raw.api().SetKernelArg(k, i++, sizeof(cl_mem), static_cast<const void*>(&mem)), "clSetKernelArg");
        raw.check(raw.api().SetKernelArg(k, i++, sizeof view, &view), "clSetKernelArg");
    }
}

void BM_RawEmptyLaunch(benchmark::State& state) {
    RawOpenCl& raw = RawOpenCl::get();
    const auto& cl = raw.api();
    cl_mem x = raw.buffer(SMALL * sizeof(float));
    cl_kernel k = raw.kernel("bench_empty");
    set_tensor_args(raw, k, {{x, dense_view(1, SMALL)}});
    const size_t global = SMALL;
    raw.check(cl.EnqueueNDRangeKernel(raw.queue(), k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "warm-up");
    raw.check(cl.Finish(raw.queue()), "clFinish");
    for (auto _ : state) {
        raw.check(cl.EnqueueNDRangeKernel(raw.queue(), k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
        raw.check(cl.Finish(raw.queue()), "clFinish");
    }
    cl.ReleaseKernel(k);
    cl.ReleaseMemObject(x);
}

void BM_RawWriteKernelRead64MiB(benchmark::State& state) {
    RawOpenCl& raw = RawOpenCl::get();
    const auto& cl = raw.api();
    const auto n = static_cast<uint32_t>(STAGED_BYTES / sizeof(float));
    std::vector<float> host(n, 0.0f);
    cl_mem x = raw.buffer(STAGED_BYTES);
    cl_kernel k = raw.kernel("bench_touch");
    set_tensor_args(raw, k, {{x, dense_view(1, n)}});
    const size_t global = n;
    for (auto _ : state) {
        raw.check(cl.EnqueueWriteBuffer(raw.queue(), x, CL_FALSE, 0, STAGED_BYTES, host.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
        raw.check(cl.EnqueueNDRangeKernel(raw.queue(), k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
        raw.check(cl.EnqueueReadBuffer(raw.queue(), x, CL_FALSE, 0, STAGED_BYTES, host.data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
        raw.check(cl.Finish(raw.queue()), "clFinish");
    }
    cl.ReleaseKernel(k);
    cl.ReleaseMemObject(x);
    if (host[n - 1] != static_cast<float>(state.iterations())) return state.SkipWithError("the buffer came back wrong");
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * STAGED_BYTES));
}

void BM_RawMatmul(benchmark::State& state) {
    RawOpenCl& raw = RawOpenCl::get();
    const auto& cl = raw.api();
    const size_t bytes = size_t{MATMUL_N} * MATMUL_N * sizeof(float);
    std::vector<float> A(size_t{MATMUL_N} * MATMUL_N), B(A.size()), C(A.size());
    fill_matrix(A.data(), MATMUL_N, 1);
    fill_matrix(B.data(), MATMUL_N, 7);
    cl_mem a = raw.buffer(bytes), b = raw.buffer(bytes), c = raw.buffer(bytes);
    raw.check(cl.EnqueueWriteBuffer(raw.queue(), a, CL_TRUE, 0, bytes, A.data(), 0, nullptr, nullptr), "write A");
    raw.check(cl.EnqueueWriteBuffer(raw.queue(), b, CL_TRUE, 0, bytes, B.data(), 0, nullptr, nullptr), "write B");
    cl_kernel k = raw.kernel("std_matmul_f32");
    const simpler::chip::clc::ClcView v = dense_view(MATMUL_N, MATMUL_N);
    set_tensor_args(raw, k, {{a, v}, {b, v}, {c, v}});
    const size_t global[2] = {MATMUL_N, MATMUL_N}, local[2] = {16, 16};
    raw.check(cl.EnqueueNDRangeKernel(raw.queue(), k, 2, nullptr, global, local, 0, nullptr, nullptr), "warm-up");
    raw.check(cl.Finish(raw.queue()), "clFinish");
    for (auto _ : state) {
        raw.check(cl.EnqueueNDRangeKernel(raw.queue(), k, 2, nullptr, global, local, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
        raw.check(cl.Finish(raw.queue()), "clFinish");
    }
    raw.check(cl.EnqueueReadBuffer(raw.queue(), c, CL_TRUE, 0, bytes, C.data(), 0, nullptr, nullptr), "read C");
    cl.ReleaseKernel(k);
    for (cl_mem m : {a, b, c}) cl.ReleaseMemObject(m);
    if (!matmul_matches(A.data(), B.data(), C.data(), MATMUL_N)) return state.SkipWithError("C differs from A @ B");
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * MATMUL_N * MATMUL_N * MATMUL_N * 1e-9 * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
}

// A row that throws (no device, a driver error) is skipped with the message.
template <void (*Row)(benchmark::State&)>
void guarded(benchmark::State& state) {
    try {
        Row(state);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

#define DEVICES ArgName("device")->Arg(0)->Arg(1)
BENCHMARK(guarded<BM_WorkerEmptyTask>)->Name("BM_WorkerEmptyTask")->DEVICES->UseRealTime();
BENCHMARK(guarded<BM_WorkerStagedRoundTrip64MiB>)
    ->Name("BM_WorkerStagedRoundTrip64MiB")
    ->ArgName("device")
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(guarded<BM_WorkerMatmul>)
    ->Name("BM_WorkerMatmul1024")
    ->ArgNames({"device", "host"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(guarded<BM_WorkerDependentTasks>)
    ->Name("BM_WorkerDependentTasks10k")
    ->ArgNames({"device", "chips"})
    ->Args({0, 2})
    ->Args({1, 2})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(guarded<BM_RawEmptyLaunch>)->Name("BM_RawEmptyLaunch")->UseRealTime();
BENCHMARK(guarded<BM_RawWriteKernelRead64MiB>)
    ->Name("BM_RawWriteKernelRead64MiB")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(guarded<BM_RawMatmul>)->Name("BM_RawMatmul1024")->Unit(benchmark::kMillisecond)->UseRealTime();
#undef DEVICES

#else

void BM_OpenClNotBuilt(benchmark::State& state) {
    for (auto _ : state) {}
    state.SkipWithError("this build drives no OpenCL devices (the OpenCL headers were not found)");
}
BENCHMARK(BM_OpenClNotBuilt);

#endif

}  // namespace
