// The runtime end to end in C++ (no Python): simpler::Worker with forked
// children whose handlers decode the argument blob and return.
//
// Round trip: submit one empty task to a sub-worker lane and wait() for it,
// per iteration, in three regimes of WorkerConfig.spin (used by every child and
// wait(); the scheduler thread never spins): hot (a fixed 1 ms spin: every hand-off lands
// while the peer spins), cold (never spins: every hand-off wakes a sleeping
// thread or process) and adaptive (the default policy). Next to it, in the same
// binary, the raw spin and futex ping-pong baselines, the decode alone, and a
// reference chase of L1-resident loads (how fast the CPU runs now).
//
// Throughput: N independent empty tasks spread over 2 chip lanes, then one
// wait(); and a chain of N tasks each INOUT on the same 64-byte view (each
// depends on the one before, so one is in flight at a time). Items per second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "benchmarks/raw_ping_pong.h"
#include "benchmarks/worker_round_trip.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

ipc::TaskHandler empty_handler() {
    return [](const ipc::TaskView& task) -> ipc::TaskOutcome {
        if (!bench::decode(task.blob)) return {ipc::TaskError::BAD_ARGUMENTS, "blob refused"};
        return {};
    };
}

enum Regime : int64_t { HOT = 0, COLD = 1, ADAPTIVE = 2 };

ipc::SpinPolicy policy_of(int64_t regime) {
    switch (regime) {
        case HOT: return ipc::fixed_spin_policy(1ms);
        case COLD: return ipc::never_spin_policy();
        default: return ipc::SpinPolicy{};
    }
}

const char* regime_name(int64_t regime) {
    switch (regime) {
        case HOT: return "hot";
        case COLD: return "cold";
        default: return "adaptive";
    }
}

WorkerConfig config(uint32_t chips, uint32_t subs, int64_t regime) {
    WorkerConfig c;
    c.num_chips = chips;
    c.num_sub_workers = subs;
    c.spin = policy_of(regime);
    c.chip_handler = [](uint32_t) { return empty_handler(); };
    c.sub_handler = [](uint32_t) { return empty_handler(); };
    return c;
}

CanonicalIdentity identity(uint64_t buffer_id) {
    CanonicalIdentity id{};
    std::memset(id.owner_instance_id, 0x5b, sizeof id.owner_instance_id);
    id.buffer_id = buffer_id;
    id.generation = 1;
    return id;
}

void BM_RawSpinPingPong(benchmark::State& state) { bench::raw_spin_ping_pong(state); }
void BM_RawSpinYieldPingPong(benchmark::State& state) { bench::raw_spin_yield_ping_pong(state); }
void BM_RawFutexPingPong(benchmark::State& state) { bench::raw_futex_ping_pong(state); }
void BM_DecodeOneTensorBlob(benchmark::State& state) { bench::decode_one_tensor_blob(state); }

// How fast this CPU runs memory-touching code now: per iteration, 1,024 dependent
// loads around a shuffled ring of 512 cache lines (32 KiB, within L1). The round
// trips touch memory, the raw ping-pong one line: when the host runs its other
// hyperthread beside this vCPU, this and the round trips slow together and the
// ping-pong does not (goals.py judges no ratio then).
void BM_ReferenceChase(benchmark::State& state) {
    constexpr size_t LINES = 512, STRIDE = 64 / sizeof(size_t);
    static const std::vector<size_t> ring = [] {
        std::vector<size_t> order(LINES), next(LINES * STRIDE);
        std::iota(order.begin(), order.end(), size_t{0});
        std::shuffle(order.begin(), order.end(), std::mt19937_64(42));  // a fixed shuffle
        for (size_t i = 0; i < LINES; ++i) next[order[i] * STRIDE] = order[(i + 1) % LINES] * STRIDE;
        return next;
    }();
    size_t at = 0;
    for (auto _ : state) {
        for (int i = 0; i < 1024; ++i) at = ring[at];
        benchmark::DoNotOptimize(at);
    }
}

// One empty SUB task per iteration: submit() publishes it to the mailbox, the
// child runs it and rings the doorbell, wait() collects it (one hand-off each way).
void BM_WorkerRoundTripSub(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(config(0, 1, state.range(0)));
    w.init();
    const TaskArgs args;
    bench::worker_round_trips(state, w, TaskKind::SUB, MemberSubmit{&args, std::nullopt});
    w.close();
}

// The same to chip lane 0 with a one-tensor blob (the chip handler decodes it).
void BM_WorkerRoundTripChipOneTensor(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(config(1, 0, state.range(0)));
    w.init();
    const std::vector<std::byte> blob = bench::one_tensor_blob();
    TaskArgs args;
    {
        TaskArgsView view;
        Tensor t;
        if (!TaskArgsView::open(blob.data(), blob.size(), view).ok() || !view.tensor(0, t).ok()) {
            state.SkipWithError("baseline blob refused");
            return;
        }
        args.add_tensor(t, TensorArgType::INPUT);
    }
    bench::worker_round_trips(state, w, TaskKind::NEXT_LEVEL, MemberSubmit{&args, 0});
    w.close();
}

// N independent empty tasks over 2 chip lanes (task i on lane i % 2), one wait().
void BM_WorkerIndependentTasks(benchmark::State& state) {
    const int64_t n = state.range(1);
    state.SetLabel(regime_name(state.range(0)));
    Worker w(config(2, 0, state.range(0)));
    w.init();
    const TaskArgs args;
    const MemberSubmit lanes[2] = {{&args, 0}, {&args, 1}};
    for (auto _ : state) {
        for (int64_t i = 0; i < n; ++i) w.submit(TaskKind::NEXT_LEVEL, 0, {&lanes[i & 1], 1}, TaskConfig{});
        w.wait();
    }
    state.SetItemsProcessed(state.iterations() * n);
    w.close();
}

// N tasks, each INOUT on the same 64-byte view: a chain, one task in flight.
void BM_WorkerChain(benchmark::State& state) {
    const int64_t n = state.range(1);
    state.SetLabel(regime_name(state.range(0)));
    Worker w(config(1, 0, state.range(0)));
    w.init();
    const uint8_t name[] = "spbench";
    const BufferDescriptor d = make_buffer_descriptor(identity(1), BackendKind::POSIX_SHM, AddressSpace::HOST,
                                                      AccessMode::READWRITE, 4096, {name, 7});
    const uint32_t shapes[1] = {16};
    TaskArgs args;
    args.add_tensor(make_tensor(d, shapes, DataType::FLOAT32), TensorArgType::INOUT);
    const MemberSubmit m{&args, 0};
    for (auto _ : state) {
        for (int64_t i = 0; i < n; ++i) w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
        w.wait();
    }
    state.SetItemsProcessed(state.iterations() * n);
    w.close();
}

}  // namespace

BENCHMARK(BM_RawSpinPingPong)->UseRealTime();
BENCHMARK(BM_RawSpinYieldPingPong)->UseRealTime();
BENCHMARK(BM_RawFutexPingPong)->UseRealTime();
BENCHMARK(BM_DecodeOneTensorBlob);
BENCHMARK(BM_ReferenceChase);
BENCHMARK(BM_WorkerRoundTripSub)->ArgName("regime")->Arg(HOT)->Arg(COLD)->Arg(ADAPTIVE)->UseRealTime();
BENCHMARK(BM_WorkerRoundTripChipOneTensor)->ArgName("regime")->Arg(HOT)->Arg(COLD)->Arg(ADAPTIVE)->UseRealTime();
BENCHMARK(BM_WorkerIndependentTasks)
    ->ArgNames({"regime", "n"})
    ->Args({HOT, 10'000})
    ->Args({COLD, 10'000})
    ->Args({ADAPTIVE, 10'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_WorkerChain)
    ->ArgNames({"regime", "n"})
    ->Args({HOT, 10'000})
    ->Args({COLD, 10'000})
    ->Args({ADAPTIVE, 10'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
