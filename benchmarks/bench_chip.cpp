// Simulated chip benchmarks: an empty kernel task's submit -> complete through
// the chip runtime (one task per run, and 1000 tasks per run), and the tiled
// std.matmul on the chip's core threads against a naive single-thread
// reference in the same process; std.copy of one buffer into another under
// each staging mode (zero-copy, staged, checked), where the copies and checks
// are most of the work. And a stencil_1d of empty tasks in one chip
// orchestration (every point's row in one buffer) at ring sizes 16, 256 and
// 4,096: the per-task cost of submit -> complete when the ring holds that many
// live tasks of one backing.
#include <benchmark/benchmark.h>

#include <vector>

#include "simpler/chip/chip.h"
#include "simpler/chip/orchestration_api.h"

using namespace simpler;

using namespace simpler::chip;

namespace {

int32_t empty_kernel(const KernelArgs*) { return CHIP_OK; }

uint32_t g_tasks = 1;
int32_t submit_empty_tasks(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("bench.empty", &k); rc != CHIP_OK) return rc;
    for (uint32_t i = 0; i < g_tasks; ++i) {
        if (int32_t rc = o.submit(k, {{o.arg(0), TensorArgType::INPUT}}); rc != CHIP_OK) return rc;
    }
    return CHIP_OK;
}

ChipConfig bench_config() {
    ChipConfig c;
    c.arena_bytes = 256 << 20;
    c.staging = StagingMode::ZERO_COPY;
    c.runtime.core_threads = 2;
    return c;
}

ChipTensor dense_view(const std::vector<float>& v, uint32_t rows, uint32_t cols) {
    ChipTensor t{};
    t.buffer.addr = reinterpret_cast<uint64_t>(v.data());
    t.buffer.size = v.size() * sizeof(float);
    t.shapes[0] = rows;
    t.shapes[1] = cols;
    t.strides[0] = cols;
    t.strides[1] = 1;
    t.ndims = 2;
    t.dtype = static_cast<uint8_t>(DataType::FLOAT32);
    return t;
}

void BM_ChipEmptyTasks(benchmark::State& state) {
    Chip chip(bench_config());
    chip.registry().add_kernel("bench.empty", empty_kernel);
    std::vector<float> data(64);
    ChipStorageTaskArgs args{};
    args.add_tensor(dense_view(data, 1, 64));
    g_tasks = static_cast<uint32_t>(state.range(0));
    const TensorArgType tags[1] = {TensorArgType::INPUT};
    for (auto _ : state) {
        const RunResult r = chip.run(submit_empty_tasks, args, tags);
        if (!r.ok) state.SkipWithError(r.error.c_str());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_ChipEmptyTasks)->Arg(1)->Arg(1000)->UseRealTime();

void naive_matmul(const std::vector<float>& A, const std::vector<float>& B, std::vector<float>& C, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            float s = 0.0f;
            for (uint32_t k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

void BM_MatmulNaiveSingleThread(benchmark::State& state) {
    const auto n = static_cast<uint32_t>(state.range(0));
    std::vector<float> A(n * n, 1.5f), B(n * n, 0.5f), C(n * n);
    for (auto _ : state) {
        naive_matmul(A, B, C, n);
        benchmark::DoNotOptimize(C.data());
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * static_cast<double>(state.iterations()) / 1e9,
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulNaiveSingleThread)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

// Args: n, then 1 to stage the host arguments into the arena (0: zero-copy).
void BM_MatmulTiledOnChip(benchmark::State& state) {
    const auto n = static_cast<uint32_t>(state.range(0));
    ChipConfig cfg = bench_config();
    if (state.range(1) != 0) cfg.staging = StagingMode::STAGE;
    Chip chip(cfg);
    std::vector<float> A(n * n, 1.5f), B(n * n, 0.5f), C(n * n);
    ChipStorageTaskArgs args{};
    args.add_tensor(dense_view(A, n, n));
    args.add_tensor(dense_view(B, n, n));
    args.add_tensor(dense_view(C, n, n));
    const TensorArgType tags[3] = {TensorArgType::INPUT, TensorArgType::INPUT, TensorArgType::OUTPUT_EXISTING};
    for (auto _ : state) {
        const RunResult r = chip.run("std.matmul", args, tags);
        if (!r.ok) state.SkipWithError(r.error.c_str());
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * static_cast<double>(state.iterations()) / 1e9,
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulTiledOnChip)
    ->ArgNames({"n", "staged"})
    ->Args({256, 0})
    ->Args({512, 0})
    ->Args({512, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Args: the bytes copied, then the staging mode (0 ZERO_COPY, 1 STAGE, 2 CHECKED).
void BM_CopyByStagingMode(benchmark::State& state) {
    const auto n = static_cast<uint32_t>(state.range(0) / sizeof(float));
    ChipConfig cfg = bench_config();
    const StagingMode modes[3] = {StagingMode::ZERO_COPY, StagingMode::STAGE, StagingMode::CHECKED};
    cfg.staging = modes[state.range(1)];
    Chip chip(cfg);
    std::vector<float> src(n, 1.5f), dst(n);
    ChipStorageTaskArgs args{};
    args.add_tensor(dense_view(src, 64, n / 64));  // 64 rows, so the orchestration tiles it
    args.add_tensor(dense_view(dst, 64, n / 64));
    const TensorArgType tags[2] = {TensorArgType::INPUT, TensorArgType::OUTPUT_EXISTING};
    for (auto _ : state) {
        const RunResult r = chip.run("std.copy", args, tags);
        if (!r.ok) state.SkipWithError(r.error.c_str());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_CopyByStagingMode)
    ->ArgNames({"bytes", "mode"})
    ->ArgsProduct({{4 << 10, 1 << 20, 16 << 20}, {0, 1, 2}})
    ->UseRealTime();

// Stencil_1d in one orchestration: width points x STENCIL_STEPS steps; task
// (t, x) writes row x of generation t % 2 and reads rows x - 1 .. x + 1 of
// generation (t - 1) % 2, all rows of one (2 * width) x 16 buffer.
constexpr uint32_t STENCIL_STEPS = 1000;
uint32_t g_width = 2;
int32_t submit_stencil(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("bench.empty", &k); rc != CHIP_OK) return rc;
    const Tensor& all = o.arg(0);
    const auto row = [&](uint32_t t, uint32_t x) {
        Tensor r{};
        (void)make_row_tile(all, (t % 2) * g_width + x, (t % 2) * g_width + x + 1, r);
        return r;
    };
    for (uint32_t t = 0; t < STENCIL_STEPS; ++t) {
        for (uint32_t x = 0; x < g_width; ++x) {
            int32_t rc = CHIP_OK;
            if (t == 0) {
                rc = o.submit(k, {{row(t, x), TensorArgType::OUTPUT_EXISTING}});
            } else {
                const uint32_t left = x == 0 ? x : x - 1, right = x + 1 == g_width ? x : x + 1;
                rc = o.submit(k, {{row(t, x), TensorArgType::OUTPUT_EXISTING},
                                  {row(t - 1, left), TensorArgType::INPUT},
                                  {row(t - 1, x), TensorArgType::INPUT},
                                  {row(t - 1, right), TensorArgType::INPUT}});
            }
            if (rc != CHIP_OK) return rc;
        }
    }
    return CHIP_OK;
}

// Args: the ring's slots, the stencil's width.
void BM_ChipStencilRing(benchmark::State& state) {
    ChipConfig cfg = bench_config();
    cfg.runtime.ring_slots = static_cast<uint32_t>(state.range(0));
    Chip chip(cfg);
    chip.registry().add_kernel("bench.empty", empty_kernel);
    g_width = static_cast<uint32_t>(state.range(1));
    std::vector<float> data(size_t{2} * g_width * 16);
    ChipStorageTaskArgs args{};
    args.add_tensor(dense_view(data, 2 * g_width, 16));
    const TensorArgType tags[1] = {TensorArgType::INOUT};
    for (auto _ : state) {
        const RunResult r = chip.run(submit_stencil, args, tags);
        if (!r.ok) state.SkipWithError(r.error.c_str());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * STENCIL_STEPS * g_width);
}
BENCHMARK(BM_ChipStencilRing)
    ->ArgNames({"ring", "width"})
    ->ArgsProduct({{16, 256, 4096}, {2, 16}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
