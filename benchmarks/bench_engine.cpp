// The engine's own per-task cost (EngineCore: checks, inference, records,
// graph, queue, completion), no processes and no IPC: what a Worker spends
// under its lock per task, apart from the hand-offs.
//
// BM_EngineRoundTrip: per iteration, the engine's part of one hot round trip
// (bench_worker BM_WorkerRoundTripSub): submit one empty sub task, take it,
// report it finished, end the run and clear it.
// BM_EngineBatch/N: N independent 4-argument tasks (3 INPUT tiles and one
// OUTPUT_EXISTING tile of 64 FLOAT32, each operand its own buffer: the tasks of
// bench_submit.py) checked then submitted as Worker::submit_many does, then
// every one taken and finished; items per second. The same rate with
// checks and submits only is BM_EngineBatchSubmit/N (the drain not timed).
// BM_EngineTiledBatchSubmit/N: the same tasks described by a Tiling and built
// on demand, for the checks and again for the submits (TaskArgsBatch.tiled
// through Worker::submit_many: no task's TaskArgs held); the drain not timed.
// BM_EngineHoldUsers/N: N live tasks (submitted, none taken), task k naming
// buffer k alone; per iteration, the exact holds of a release
// (EngineCore::hold_users, what Worker.release_buffer asks under the engine's
// lock) of a buffer one task names, then of one no task names.
#include <benchmark/benchmark.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tiling.h"

using namespace simpler;

namespace {

constexpr uint32_t TILE = 64;

EngineConfig one_sub_worker() {
    EngineConfig c;
    c.children[static_cast<size_t>(ChildKind::SUB_WORKER)] = 1;
    return c;
}

BufferDescriptor buffer(uint64_t id, uint64_t nbytes) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x5e, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    const uint8_t name[] = "spbench";
    return make_buffer_descriptor(c, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, nbytes,
                                  {name, 7});
}

constexpr TensorArgType TAGS[4] = {TensorArgType::INPUT, TensorArgType::INPUT, TensorArgType::INPUT,
                                   TensorArgType::OUTPUT_EXISTING};

std::vector<BufferDescriptor> tiled_buffers(size_t n) {
    std::vector<BufferDescriptor> bufs;
    for (uint64_t b = 0; b < 4; ++b) bufs.push_back(buffer(b + 1, n * TILE * 4));
    return bufs;
}

std::vector<TaskArgs> tiled_tasks(size_t n) {
    const std::vector<BufferDescriptor> bufs = tiled_buffers(n);
    std::vector<TaskArgs> out(n);
    const uint32_t shapes[1] = {TILE};
    const uint32_t strides[1] = {1};
    for (size_t k = 0; k < n; ++k)
        for (size_t b = 0; b < 4; ++b)
            out[k].add_tensor(make_tensor(bufs[b], shapes, DataType::FLOAT32, strides, uint64_t{TILE} * 4 * k),
                              TAGS[b]);  // tile k at byte TILE * 4 * k: the tiles do not overlap
    return out;
}

void drain(EngineCore& core, std::vector<Dispatch>& d) {
    while (core.unfinished() > 0) {
        d.clear();
        core.take(d);
        for (const Dispatch& x : d) core.member_finished(x, {});
    }
}

void BM_EngineRoundTrip(benchmark::State& state) {
    EngineCore core(one_sub_worker());
    const TaskArgs args;
    const MemberSubmit m{&args, std::nullopt};
    std::vector<Dispatch> d;
    for (auto _ : state) {
        core.submit(TaskKind::SUB, 1, {&m, 1}, TaskConfig{});
        d.clear();
        core.take(d);
        core.member_finished(d.front(), {});
        (void)core.end_run();
        core.clear_failure();
    }
}

// As Worker::submit_many: every task checked, then every one submitted.
void submit_batch(EngineCore& core, BatchSource& batch) {
    if (core.check_batch(core.next_task_id(), TaskKind::SUB, batch)) throw std::logic_error("batch refused");
    for (size_t i = 0; i < batch.size(); ++i)
        core.submit(TaskKind::SUB, 1, {&batch.task(i), 1}, TaskConfig{}, /*checked=*/true);
}

// submit_batch() of `batch` per iteration, the drain not timed.
void time_submits(benchmark::State& state, BatchSource& batch) {
    EngineCore core(one_sub_worker());
    std::vector<Dispatch> d;
    for (auto _ : state) {
        submit_batch(core, batch);
        state.PauseTiming();
        drain(core, d);
        (void)core.end_run();
        core.clear_failure();
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch.size()));
}

void BM_EngineBatch(benchmark::State& state) {
    const auto n = static_cast<size_t>(state.range(0));
    EngineCore core(one_sub_worker());
    const std::vector<TaskArgs> args = tiled_tasks(n);
    std::vector<MemberSubmit> members;
    for (const TaskArgs& a : args) members.push_back({&a, std::nullopt});
    SpanBatch batch(members);
    std::vector<Dispatch> d;
    for (auto _ : state) {
        submit_batch(core, batch);
        drain(core, d);
        (void)core.end_run();
        core.clear_failure();
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_EngineBatchSubmit(benchmark::State& state) {
    const std::vector<TaskArgs> args = tiled_tasks(static_cast<size_t>(state.range(0)));
    std::vector<MemberSubmit> members;
    for (const TaskArgs& a : args) members.push_back({&a, std::nullopt});
    SpanBatch batch(members);
    time_submits(state, batch);
}

// The tasks of tiled_tasks(n) as a Tiling builds them, one at a time into
// scratch (TaskArgsBatch.tiled's tasks through Worker::submit_many).
class TiledSource final : public BatchSource {
public:
    explicit TiledSource(size_t n) : tiling_(operands(n)) { member_.args = &scratch_; }
    [[nodiscard]] size_t size() const noexcept override { return tiling_.size(); }
    const MemberSubmit& task(size_t i) override {
        tiling_.fill(i, scratch_);
        return member_;
    }

private:
    static std::vector<TileOperand> operands(size_t n) {
        std::vector<TileOperand> ops;
        const uint32_t whole[1] = {static_cast<uint32_t>(n * TILE)};
        for (size_t b = 0; const BufferDescriptor& d : tiled_buffers(n))
            ops.push_back({make_tensor(d, whole, DataType::FLOAT32), TAGS[b++], {TILE}});
        return ops;
    }
    Tiling tiling_;
    TaskArgs scratch_;
    MemberSubmit member_;
};

void BM_EngineTiledBatchSubmit(benchmark::State& state) {
    TiledSource batch(static_cast<size_t>(state.range(0)));
    time_submits(state, batch);
}

void BM_EngineHoldUsers(benchmark::State& state) {
    const auto n = static_cast<size_t>(state.range(0));
    EngineCore core(one_sub_worker());
    const uint32_t shapes[1] = {TILE};
    const uint32_t strides[1] = {1};
    TaskArgs args;
    const MemberSubmit m{&args, std::nullopt};
    for (uint64_t k = 1; k <= n; ++k) {
        args.clear();
        args.add_tensor(make_tensor(buffer(k, TILE * 4), shapes, DataType::FLOAT32, strides), TensorArgType::INPUT);
        core.submit(TaskKind::SUB, 1, {&m, 1}, TaskConfig{});
    }
    const CanonicalIdentity named = buffer(n / 2, TILE * 4).identity;
    const CanonicalIdentity unnamed = buffer(n + 1, TILE * 4).identity;
    for (auto _ : state)
        if (core.hold_users(named) != 1 || core.hold_users(unnamed) != 0) throw std::logic_error("wrong holds");
}

}  // namespace

BENCHMARK(BM_EngineRoundTrip);
BENCHMARK(BM_EngineBatch)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineBatchSubmit)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineTiledBatchSubmit)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineHoldUsers)->Arg(100000)->Unit(benchmark::kMicrosecond);
