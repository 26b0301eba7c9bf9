// Who runs a chip's kernels (chip_runtime.h): the core threads and run()'s
// waiting caller, never more than core_threads kernels at once and never two
// under one core id; a run of one kernel wakes no sleeping core thread (the
// caller runs it); a chain longer than the ring (one ready task at a time) still
// finishes, and so does a stencil of rows of one buffer through rings of 3 to
// 1,024 slots, with the sequential result (the submitter runs ready tasks while
// the ring is full); disjoint tasks still run concurrently (proved with a rendezvous)
// whether idle threads spin or sleep; a spinning chip goes quiet after one
// budget; an idle_spin out of range is refused.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/chip_runtime.h"
#include "simpler/chip/orchestration_api.h"
#include "simpler/chip/simulated_device.h"
#include "simpler/ipc/process_cpu.h"

using namespace simpler::chip;
using namespace std::chrono_literals;

namespace {

std::atomic<uint32_t> g_busy_ids{0};  // bit per core id of a kernel running now
std::atomic<int> g_running{0};
std::atomic<int> g_max_running{0};
std::atomic<int> g_bad{0};  // kernels that saw their core id taken or out of range
std::atomic<uint32_t> g_core_threads{0};

// Holds its core id for a moment and checks that no other kernel holds it.
int32_t claim_core(const KernelArgs* a) {
    const uint32_t bit = 1u << a->core_id;
    if (a->core_id >= g_core_threads.load() || (g_busy_ids.fetch_or(bit) & bit) != 0) g_bad.fetch_add(1);
    const int now = g_running.fetch_add(1) + 1;
    for (int seen = g_max_running.load(); now > seen && !g_max_running.compare_exchange_weak(seen, now);) {}
    for (int i = 0; i < 200; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
    g_running.fetch_sub(1);
    g_busy_ids.fetch_and(~bit);
    return CHIP_OK;
}

// Two kernels that each wait (bounded: 5 s) until both have started.
std::atomic<int> g_arrived{0};
int32_t rendezvous(const KernelArgs* a) {
    g_arrived.fetch_add(1);
    for (int i = 0; i < 5000 && g_arrived.load() < 2; ++i) std::this_thread::sleep_for(1ms);
    if (g_arrived.load() < 2) return kernel_fail(a, "the other task never started");
    return CHIP_OK;
}

float g_data[64];

double process_cpu_seconds() {
    const std::optional<uint64_t> ticks = simpler::ipc::process_cpu_ticks(getpid());
    return ticks ? static_cast<double>(*ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)) : -1;
}

ChipStorageTaskArgs one_vector_arg() {
    ChipStorageTaskArgs args{};
    ChipTensor& t = args.tensors[0];
    t.buffer.addr = reinterpret_cast<uint64_t>(g_data);
    t.buffer.size = sizeof g_data;
    t.shapes[0] = 64;
    t.strides[0] = 1;
    t.ndims = 1;
    t.dtype = static_cast<uint8_t>(DataType::FLOAT32);
    args.tensor_count = 1;
    return args;
}

// 16 independent readers of the vector, one kernel each.
int32_t sixteen_readers(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.claim_core", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    for (int i = 0; i < 16; ++i)
        if (int32_t rc = o.submit(k, {{o.arg(0), TensorArgType::INPUT}}); rc != CHIP_OK) return rc;
    return CHIP_OK;
}

// Two writers of disjoint halves that rendezvous.
int32_t two_halves(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.rendezvous", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    Tensor lo{}, hi{};
    make_row_tile(o.arg(0), 0, 32, lo);
    make_row_tile(o.arg(0), 32, 64, hi);
    if (int32_t rc = o.submit(k, {{lo, TensorArgType::OUTPUT_EXISTING}}); rc != CHIP_OK) return rc;
    return o.submit(k, {{hi, TensorArgType::OUTPUT_EXISTING}});
}

std::thread::id g_ran_on;
int32_t note_thread(const KernelArgs*) {
    g_ran_on = std::this_thread::get_id();
    return CHIP_OK;
}

int32_t one_kernel(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.note_thread", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    return o.submit(k, {{o.arg(0), TensorArgType::INOUT}});
}

// 50 INOUT tasks on one view: each waits for the one before, so at most one is
// ever ready, and the 4-slot ring fills while the orchestration still submits.
int32_t long_chain(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.note_thread", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    for (int i = 0; i < 50; ++i)
        if (int32_t rc = o.submit(k, {{o.arg(0), TensorArgType::INOUT}}); rc != CHIP_OK) return rc;
    return CHIP_OK;
}

// Stencil_1d over the rows of one (2 * STENCIL_WIDTH) x 16 buffer: task (0, x)
// fills row x with x; task (t, x) writes row x of generation t % 2 as the mean
// of rows x - 1 .. x + 1 (clamped) of generation (t - 1) % 2 plus t; a missing
// edge reads a wrong generation.
constexpr uint32_t STENCIL_WIDTH = 5, STENCIL_STEPS = 40, STENCIL_COLS = 16;
float g_grid[2 * STENCIL_WIDTH * STENCIL_COLS];

float stencil_value(float left, float mid, float right, uint64_t t) {
    return (left + mid + right) / 3.0f + static_cast<float>(t);
}

// Every other point takes a while, so a task that started early would read a stale row.
int32_t stencil_point(const KernelArgs* a) {
    if (a->scalars[1] % 2 == 0) std::this_thread::sleep_for(50us);
    float* out = base_ptr<float>(a->tensors[0]) + a->tensors[0].start_offset;
    const auto in = [&](uint32_t i, uint32_t c) {
        return base_ptr<float>(a->tensors[i])[a->tensors[i].start_offset + c];
    };
    for (uint32_t c = 0; c < STENCIL_COLS; ++c)
        out[c] = a->tensor_count == 1 ? static_cast<float>(a->scalars[0])
                                      : stencil_value(in(1, c), in(2, c), in(3, c), a->scalars[0]);
    return CHIP_OK;
}

int32_t stencil(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.stencil_point", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    const auto row = [&](uint32_t t, uint32_t x) {
        Tensor r{};
        (void)make_row_tile(o.arg(0), (t % 2) * STENCIL_WIDTH + x, (t % 2) * STENCIL_WIDTH + x + 1, r);
        return r;
    };
    for (uint32_t t = 0; t < STENCIL_STEPS; ++t)
        for (uint32_t x = 0; x < STENCIL_WIDTH; ++x) {
            const uint32_t left = x == 0 ? 0 : x - 1, right = std::min(x + 1, STENCIL_WIDTH - 1);
            const int32_t rc = t == 0 ? o.submit(k, {{row(t, x), TensorArgType::OUTPUT_EXISTING}}, {x, x})
                                      : o.submit(k,
                                                 {{row(t, x), TensorArgType::OUTPUT_EXISTING},
                                                  {row(t - 1, left), TensorArgType::INPUT},
                                                  {row(t - 1, x), TensorArgType::INPUT},
                                                  {row(t - 1, right), TensorArgType::INPUT}},
                                                 {t, t + x});
            if (rc != CHIP_OK) return rc;
        }
    return CHIP_OK;
}

// The stencil's last generation, computed in order.
std::vector<float> stencil_reference() {
    std::vector<float> prev(STENCIL_WIDTH), next(STENCIL_WIDTH);
    for (uint32_t x = 0; x < STENCIL_WIDTH; ++x) prev[x] = static_cast<float>(x);
    for (uint32_t t = 1; t < STENCIL_STEPS; ++t) {
        for (uint32_t x = 0; x < STENCIL_WIDTH; ++x)
            next[x] = stencil_value(prev[x == 0 ? 0 : x - 1], prev[x], prev[std::min(x + 1, STENCIL_WIDTH - 1)], t);
        prev.swap(next);
    }
    return prev;
}

ChipStorageTaskArgs grid_arg() {
    ChipStorageTaskArgs args{};
    args.add_tensor(chip_test::view(g_grid, sizeof g_grid, 0, {2 * STENCIL_WIDTH, STENCIL_COLS}, {STENCIL_COLS, 1}));
    return args;
}

struct RuntimeExecutors : ::testing::TestWithParam<std::chrono::nanoseconds> {
    KernelRegistry registry;
    SimulatedDevice device{registry, {.memory_bytes = 1 << 20}};
    void SetUp() override {
        registry.add_kernel("test.claim_core", claim_core);
        registry.add_kernel("test.rendezvous", rendezvous);
        registry.add_kernel("test.note_thread", note_thread);
        registry.add_kernel("test.stencil_point", stencil_point);
        g_busy_ids = 0;
        g_running = 0;
        g_max_running = 0;
        g_bad = 0;
    }
};

}  // namespace

TEST_P(RuntimeExecutors, NoTwoKernelsShareACoreIdAndAtMostCoreThreadsRunAtOnce) {
    for (uint32_t cores : {1u, 2u, 3u}) {
        g_core_threads = cores;
        Runtime rt(registry, device, RuntimeConfig{cores, 8, GetParam()});
        for (int run = 0; run < 200; ++run) {
            const RunResult r = rt.run(sixteen_readers, one_vector_arg());
            ASSERT_TRUE(r.ok) << r.error;
            ASSERT_EQ(r.tasks_run, 16u);
        }
        EXPECT_EQ(g_bad.load(), 0) << cores << " core threads: a kernel ran under a core id in use or out of range";
        EXPECT_LE(g_max_running.load(), static_cast<int>(cores));
    }
}

// With core threads asleep (no spin budget) the one ready task is left to the
// caller; a spinning core thread may take it instead (it costs no wake-up).
TEST(RuntimeOneKernel, ARunOfOneKernelWakesNoSleepingCoreThread) {
    KernelRegistry registry;
    SimulatedDevice device{registry, {.memory_bytes = 1 << 20}};
    registry.add_kernel("test.note_thread", note_thread);
    Runtime rt(registry, device, RuntimeConfig{2, 8, 0ns});
    std::this_thread::sleep_for(50ms);  // the core threads have started and sleep
    for (int run = 0; run < 100; ++run) {
        g_ran_on = {};
        const RunResult r = rt.run(one_kernel, one_vector_arg());
        ASSERT_TRUE(r.ok) << r.error;
        ASSERT_EQ(g_ran_on, std::this_thread::get_id()) << "run " << run << " woke a core thread for its one kernel";
    }
}

TEST_P(RuntimeExecutors, AChainLongerThanTheRingFinishes) {
    Runtime rt(registry, device, RuntimeConfig{2, 4, GetParam()});
    RunResult r;
    ASSERT_TRUE(chip_test::finishes_within(10s, [&] { r = rt.run(long_chain, one_vector_arg()); }))
        << "the chain hung with the ring full";
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.tasks_run, 50u);
}

TEST_P(RuntimeExecutors, AStencilOfRowsOfOneBufferGivesTheSequentialResultWhateverTheRing) {
    const std::vector<float> expected = stencil_reference();
    for (const uint32_t slots : {3u, 16u, 1024u}) {
        std::fill(std::begin(g_grid), std::end(g_grid), -1.0f);
        Runtime rt(registry, device, RuntimeConfig{2, slots, GetParam()});
        RunResult r;
        ASSERT_TRUE(chip_test::finishes_within(20s, [&] { r = rt.run(stencil, grid_arg()); })) << slots << " slots";
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_EQ(r.tasks_run, uint64_t{STENCIL_WIDTH} * STENCIL_STEPS);
        const uint32_t last = (STENCIL_STEPS - 1) % 2;
        for (uint32_t x = 0; x < STENCIL_WIDTH; ++x)
            for (uint32_t c = 0; c < STENCIL_COLS; ++c)
                ASSERT_EQ(g_grid[(last * STENCIL_WIDTH + x) * STENCIL_COLS + c], expected[x])
                    << slots << " slots, point " << x << ", column " << c;
    }
}

TEST_P(RuntimeExecutors, DisjointTasksStillRunConcurrently) {
    Runtime rt(registry, device, RuntimeConfig{2, 8, GetParam()});
    for (int run = 0; run < 20; ++run) {
        g_arrived = 0;
        const RunResult r = rt.run(two_halves, one_vector_arg());
        ASSERT_TRUE(r.ok) << r.error;
    }
}

INSTANTIATE_TEST_SUITE_P(IdleSpin, RuntimeExecutors, ::testing::Values(0ns, 50us),
                         [](const ::testing::TestParamInfo<std::chrono::nanoseconds>& p) {
                             return p.param.count() == 0 ? "Sleep" : "Spin";
                         });

TEST(RuntimeIdleSpin, ASpinningChipGoesQuietAfterOneBudget) {
    KernelRegistry registry;
    SimulatedDevice device{registry, {.memory_bytes = 1 << 20}};
    registry.add_kernel("test.claim_core", claim_core);
    g_core_threads = 4;
    Runtime rt(registry, device, RuntimeConfig{4, 16, 1ms});
    ASSERT_TRUE(rt.run(sixteen_readers, one_vector_arg()).ok);
    std::this_thread::sleep_for(20ms);  // past the budget: every thread is asleep
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(1s);
    const double used = process_cpu_seconds() - before;
    ASSERT_GE(before, 0.0);
    // /proc reports CPU time in whole clock ticks (10 ms): a core thread still spinning would use ~1 s
    // here, and 5 ticks leave room for the rounding and for the sanitizers' own threads.
    EXPECT_LT(used, 0.05) << "idle chip used " << used << " s of CPU in 1 s";
}

TEST(RuntimeIdleSpin, AnIdleSpinOutOfRangeIsRefused) {
    KernelRegistry registry;
    SimulatedDevice device{registry, {.memory_bytes = 1 << 20}};
    EXPECT_THROW(Runtime(registry, device, RuntimeConfig{2, 8, -1ns}), std::invalid_argument);
    EXPECT_THROW(Runtime(registry, device, RuntimeConfig{2, 8, 2s}), std::invalid_argument);
    try {
        validate_runtime_config(RuntimeConfig{2, 8, 2s});
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("RuntimeConfig.idle_spin"), std::string::npos) << e.what();
    }
}
