// Runtime: overlapping views run in submission order, disjoint tiles run
// concurrently, a kernel failure ends the run with the kernel's name and
// message (bounded, no hang) and leaves the runtime usable, malformed submits
// are refused, device temporaries are freed, and idle core threads sleep.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "chip_fixtures.h"
#include "simpler/chip/chip_runtime.h"
#include "simpler/chip/orchestration_api.h"
#include "simpler/chip/simulated_device.h"
#include "simpler/ipc/process_cpu.h"

using namespace simpler::chip;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

struct Span {
    Clock::time_point begin, end;
};
Span g_spans[8];  // NOLINT(bugprone-throwing-static-initialization): time_point() only zeroes

// Sleeps 150 ms and records its span in g_spans[scalar 0].
int32_t sleep_record(const KernelArgs* a) {
    const uint64_t i = a->scalars[0];
    g_spans[i].begin = Clock::now();
    std::this_thread::sleep_for(150ms);
    g_spans[i].end = Clock::now();
    return CHIP_OK;
}

int32_t fail_kernel(const KernelArgs* a) {
    return kernel_fail(a, "boom %llu", static_cast<unsigned long long>(a->scalars[0]));
}

std::atomic<int> g_count{0};
int32_t count_kernel(const KernelArgs*) {
    g_count.fetch_add(1);
    return CHIP_OK;
}

uint64_t g_seen_producer[2];
int32_t g_seen_version[2];
// Holds task 0 of record_meta until the orchestration has submitted task 1, so
// task 1 is linked while its producer is still live (bounded: 5 s).
std::atomic<bool> g_reader_submitted{true};
int32_t record_meta(const KernelArgs* a) {
    if (a->scalars[0] == 0)
        for (int i = 0; i < 5000 && !g_reader_submitted.load(); ++i) std::this_thread::sleep_for(1ms);
    g_seen_producer[a->scalars[0]] = a->tensors[0].producer_task;
    g_seen_version[a->scalars[0]] = a->tensors[0].overlap_version;
    return CHIP_OK;
}

struct ChipRuntime : ::testing::Test {
    KernelRegistry registry;
    SimulatedDevice device{registry, {.memory_bytes = 1 << 24}};
    void SetUp() override {
        registry.add_kernel("test.sleep_record", sleep_record);
        registry.add_kernel("test.fail", fail_kernel);
        registry.add_kernel("test.count", count_kernel);
        registry.add_kernel("test.record_meta", record_meta);
    }
};

float g_data[64];

ChipStorageTaskArgs one_vector_arg() {
    ChipStorageTaskArgs args{};
    args.add_tensor(chip_test::view(g_data, sizeof g_data, 0, {64}, {1}));
    return args;
}

// Two tasks: halves [0,32) and [32,64) when g_disjoint, else the same [0,32),
// tagged g_tags[0] and g_tags[1].
bool g_disjoint = false;
TensorArgType g_tags[2] = {TensorArgType::OUTPUT_EXISTING, TensorArgType::INOUT};
int32_t two_tasks(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (o.kernel_id("test.sleep_record", &k) != CHIP_OK) return CHIP_ERR_NOT_FOUND;
    Tensor first{}, second{};
    make_row_tile(o.arg(0), 0, 32, first);
    make_row_tile(o.arg(0), g_disjoint ? 32 : 0, g_disjoint ? 64 : 32, second);
    if (int32_t rc = o.submit(k, {{first, g_tags[0]}}, {0}); rc != CHIP_OK) return rc;
    return o.submit(k, {{second, g_tags[1]}}, {1});
}

// Runs two_tasks with the given tags; true when the second started after the first ended.
bool ran_in_order(const KernelRegistry& registry, Device& device, bool disjoint, TensorArgType first,
                  TensorArgType second) {
    Runtime rt(registry, device, RuntimeConfig{2, 16});
    g_disjoint = disjoint;
    g_tags[0] = first;
    g_tags[1] = second;
    const RunResult r = rt.run(two_tasks, one_vector_arg());
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.tasks_run, 2u);
    if (g_spans[1].begin >= g_spans[0].end) return true;
    EXPECT_LT(g_spans[0].begin, g_spans[1].end) << "neither ordered nor concurrent";
    return false;
}

}  // namespace

TEST_F(ChipRuntime, OverlappingWritesRunInSubmissionOrder) {
    EXPECT_TRUE(ran_in_order(registry, device, false, TensorArgType::OUTPUT_EXISTING, TensorArgType::INOUT));
}

TEST_F(ChipRuntime, AReaderWaitsForAnEarlierOverlappingWriter) {
    EXPECT_TRUE(ran_in_order(registry, device, false, TensorArgType::OUTPUT, TensorArgType::INPUT));
}

TEST_F(ChipRuntime, AWriterWaitsForAnEarlierOverlappingReader) {
    EXPECT_TRUE(ran_in_order(registry, device, false, TensorArgType::INPUT, TensorArgType::OUTPUT_EXISTING));
}

TEST_F(ChipRuntime, ReadersOfOneViewRunConcurrently) {
    EXPECT_FALSE(ran_in_order(registry, device, false, TensorArgType::INPUT, TensorArgType::INPUT));
}

TEST_F(ChipRuntime, NoDepArgumentsAreNotOrdered) {
    EXPECT_FALSE(ran_in_order(registry, device, false, TensorArgType::OUTPUT_EXISTING, TensorArgType::NO_DEP));
}

TEST_F(ChipRuntime, DisjointTilesRunConcurrently) {
    EXPECT_FALSE(ran_in_order(registry, device, true, TensorArgType::OUTPUT_EXISTING, TensorArgType::INOUT));
}

namespace {
// A chain of read-after-write tasks through a 4-slot ring, then a failure.
int32_t many_tasks(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    o.kernel_id("test.count", &k);
    for (int i = 0; i < 500; ++i) {
        const TensorArgType tag = (i % 3 == 0) ? TensorArgType::INOUT : TensorArgType::INPUT;
        if (int32_t rc = o.submit(k, {{o.arg(0), tag}}); rc != CHIP_OK) return rc;
    }
    return CHIP_OK;
}
int32_t chain_with_failure(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t f = 0, c = 0;
    o.kernel_id("test.fail", &f);
    o.kernel_id("test.count", &c);
    if (int32_t rc = o.submit(f, {{o.arg(0), TensorArgType::OUTPUT_EXISTING}}, {7}); rc != CHIP_OK) return rc;
    for (int i = 0; i < 50; ++i) {
        if (int32_t rc = o.submit(c, {{o.arg(0), TensorArgType::INOUT}}); rc != CHIP_OK) return rc;
    }
    return CHIP_OK;
}
}  // namespace

TEST_F(ChipRuntime, ManyTasksWrapTheRingAndAllRun) {
    Runtime rt(registry, device, RuntimeConfig{2, 4});
    g_count = 0;
    const RunResult r = rt.run(many_tasks, one_vector_arg());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.tasks_submitted, 500u);
    EXPECT_EQ(g_count.load(), 500);
}

TEST_F(ChipRuntime, AKernelFailureEndsTheRunWithItsNameAndMessage) {
    Runtime rt(registry, device, RuntimeConfig{2, 8});
    g_count = 0;
    RunResult r;
    ASSERT_TRUE(chip_test::finishes_within(10s, [&] { r = rt.run(chain_with_failure, one_vector_arg()); }));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("kernel 'test.fail'"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("boom 7"), std::string::npos) << r.error;
    EXPECT_EQ(g_count.load(), 0);  // every dependent was skipped
    // The runtime stays usable.
    const RunResult again = rt.run(many_tasks, one_vector_arg());
    EXPECT_TRUE(again.ok) << again.error;
}

namespace {
int32_t bad_submits(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    Tensor t = o.arg(0);
    t.start_offset = 60;  // 4-element view... shape 64 from offset 60 ends past the backing
    return o.submit(0, {{t, TensorArgType::INPUT}});
}
int32_t unknown_kernel(const OrchestrationContext* ctx) {
    uint32_t k = 0;
    return Orchestration(ctx).kernel_id("no.such.kernel", &k);
}
int32_t throws(const OrchestrationContext*) { throw std::runtime_error("orchestration exploded"); }
}  // namespace

TEST_F(ChipRuntime, MalformedSubmitsAreRefusedWithAMessage) {
    Runtime rt(registry, device);
    RunResult r = rt.run(bad_submits, one_vector_arg());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("submit of kernel 'test.sleep_record': tensor[0]"), std::string::npos) << r.error;
    r = rt.run(unknown_kernel, one_vector_arg());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("no kernel named 'no.such.kernel'"), std::string::npos) << r.error;
    r = rt.run(throws, one_vector_arg());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("orchestration exploded"), std::string::npos) << r.error;
}

TEST_F(ChipRuntime, InvalidEntryArgumentsAreRefusedNamingTheIndex) {
    Runtime rt(registry, device);
    ChipStorageTaskArgs args = one_vector_arg();
    args.tensors[0].buffer.addr = 0;
    const RunResult r = rt.run(many_tasks, args);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("tensor[0]"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("buffer.addr"), std::string::npos) << r.error;
}

namespace {
int32_t uses_temporary(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    Tensor tmp{};
    if (int32_t rc = o.alloc_tensor({8, 8}, DataType::FLOAT32, &tmp); rc != CHIP_OK) return rc;
    if (tmp.address_space != 1 || tmp.is_contiguous != 1 || tmp.size != 256) return o.fail("bad temporary");
    uint32_t k = 0;
    o.kernel_id("test.count", &k);
    return o.submit(k, {{tmp, TensorArgType::OUTPUT}});
}
}  // namespace

TEST_F(ChipRuntime, DeviceTemporariesAreFreedWhenTheRunEnds) {
    Runtime rt(registry, device);
    const RunResult r = rt.run(uses_temporary, one_vector_arg());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
    EXPECT_EQ(device.memory_stats().total_allocations, 1u);
}

namespace {
double process_cpu_seconds() {
    const std::optional<uint64_t> ticks = simpler::ipc::process_cpu_ticks(getpid());
    return ticks ? static_cast<double>(*ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)) : -1;
}
}  // namespace

TEST_F(ChipRuntime, IdleCoreThreadsUseNoCpu) {
    Runtime rt(registry, device, RuntimeConfig{4, 16});
    ASSERT_TRUE(rt.run(many_tasks, one_vector_arg()).ok);
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(1s);
    const double used = process_cpu_seconds() - before;
    ASSERT_GE(before, 0.0);
    // /proc reports CPU time in whole clock ticks (10 ms): a core thread still spinning would use ~1 s
    // here, and 5 ticks leave room for the rounding and for the sanitizers' own threads.
    EXPECT_LT(used, 0.05) << "idle chip used " << used << " s of CPU in 1 s";
}

namespace {
int32_t writer_then_reader(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    o.kernel_id("test.record_meta", &k);
    if (int32_t rc = o.submit(k, {{o.arg(0), TensorArgType::OUTPUT}}, {0}); rc != CHIP_OK) return rc;
    Tensor tile{};
    make_row_tile(o.arg(0), 8, 16, tile);
    const int32_t rc = o.submit(k, {{tile, TensorArgType::INPUT}}, {1});
    g_reader_submitted = true;
    return rc;
}
}  // namespace

TEST_F(ChipRuntime, ATaskSeesItsProducerAndTheBackingsWriteCount) {
    g_reader_submitted = false;
    Runtime rt(registry, device);
    const RunResult r = rt.run(writer_then_reader, one_vector_arg());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(g_seen_producer[0], NO_PRODUCER);
    EXPECT_EQ(g_seen_version[0], 0);
    EXPECT_EQ(g_seen_producer[1], r.first_task_id);  // the writer, the run's first task
    EXPECT_EQ(g_seen_version[1], 1);
}

namespace {
uint8_t g_read[16];
// Reads 16 bytes of its entry tensor, then submits a task, then tries to read again.
int32_t reads_then_submits(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    if (int32_t rc = o.read_entry(0, g_read, sizeof g_read); rc != CHIP_OK) return rc;
    uint32_t k = 0;
    o.kernel_id("test.count", &k);
    if (int32_t rc = o.submit(k, {{o.arg(0), TensorArgType::INPUT}}); rc != CHIP_OK) return rc;
    uint8_t late[4];
    return o.read_entry(0, late, sizeof late);
}
int32_t reads_past_the_view(const OrchestrationContext* ctx) {
    static uint8_t dst[1024];
    return Orchestration(ctx).read_entry(0, dst, sizeof dst);
}
int32_t reads_a_missing_argument(const OrchestrationContext* ctx) {
    uint8_t dst[4];
    return Orchestration(ctx).read_entry(1, dst, sizeof dst);
}
}  // namespace

TEST_F(ChipRuntime, AnOrchestrationReadsAnEntryArgumentOnlyBeforeItsFirstSubmit) {
    Runtime rt(registry, device);
    for (size_t i = 0; i < 16; ++i) reinterpret_cast<uint8_t*>(g_data)[i] = static_cast<uint8_t>(i * 7);
    const RunResult r = rt.run(reads_then_submits, one_vector_arg());
    EXPECT_FALSE(r.ok);
    const auto* written = reinterpret_cast<const uint8_t*>(g_data);
    EXPECT_TRUE(std::equal(g_read, g_read + sizeof g_read, written));
    EXPECT_NE(r.error.find("read_entry: entry tensor 0 read after the run's first submit"), std::string::npos)
        << r.error;
    const RunResult past = rt.run(reads_past_the_view, one_vector_arg());
    EXPECT_FALSE(past.ok);
    EXPECT_NE(past.error.find("is a contiguous view of 256 bytes; 1024 bytes asked"), std::string::npos) << past.error;
    const RunResult missing = rt.run(reads_a_missing_argument, one_vector_arg());
    EXPECT_FALSE(missing.ok);
    EXPECT_NE(missing.error.find("read_entry: no entry tensor 1 (there are 1)"), std::string::npos) << missing.error;
}
