// The cost of one forwarding hop in C++ (no Python): an empty task L4 -> L3 ->
// chip against L3 -> chip, in the same binary run.
//
// The L3 side is a simpler::Worker with one chip lane whose handler decodes the
// blob and returns (as in bench_worker). The L4 side is a Worker with
// num_workers next-level lanes; each lane's handler, made inside the forked
// child, builds an L3 Worker there (forking its one chip) and forwards every
// task the way a nested Worker does: it opens and validates the blob, re-exports
// each tensor through its own ImportRegistry (nothing mapped), tags it from the
// write mask (INOUT or OUTPUT_EXISTING when written, INPUT otherwise), submits
// it to its chip with the same callable and call config, waits, and returns the
// outcome. The forwarding handler lives here: nothing but this benchmark
// forwards tasks from C++ (Python's nested Workers run orchestration functions,
// python/simpler/tree/nested.py).
//
// Rows: the raw spin ping-pong; the forwarding work alone (the child's decode,
// re-export and tagging of the one-tensor task, in one process, nothing
// mapped); the round trip, one task naming one tensor per iteration, submit()
// then wait(), hot (every waiter spins up to 1 ms) and adaptive (the default
// policy), with a control: the L3 round trip next to a third spinning process;
// throughput, N independent empty tasks over 2 lanes (L3: 2 chips;
// L4: 2 L3 children, one chip each), one wait(). Real time, except the
// forwarding work (CPU time).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/raw_ping_pong.h"
#include "benchmarks/worker_round_trip.h"
#include "simpler/backing/import_registry.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

enum Regime : int64_t { HOT = 0, ADAPTIVE = 2 };

ipc::SpinPolicy policy_of(int64_t regime) { return regime == HOT ? ipc::fixed_spin_policy(1ms) : ipc::SpinPolicy{}; }

const char* regime_name(int64_t regime) { return regime == HOT ? "hot" : "adaptive"; }

// The chip: decodes and validates the blob, does nothing else.
ipc::TaskHandler empty_handler() {
    return [](const ipc::TaskView& task) -> ipc::TaskOutcome {
        if (!bench::decode(task.blob)) return {ipc::TaskError::BAD_ARGUMENTS, "blob refused"};
        return {};
    };
}

WorkerConfig l3_config(uint32_t chips, ipc::SpinPolicy spin) {
    WorkerConfig c;
    c.num_chips = chips;
    c.spin = spin;
    c.chip_handler = [](uint32_t) { return empty_handler(); };
    return c;
}

// What a forwarded tensor is tagged in the nested run: the parent's write mask
// says whether its task writes it; tags do not cross the blob.
TensorArgType forwarded_tag(const CallConfig& config, size_t i, const Tensor& t) {
    if (!writes_tensor(config, i)) return TensorArgType::INPUT;
    return t.buffer.access == static_cast<uint8_t>(AccessMode::READWRITE) ? TensorArgType::INOUT
                                                                          : TensorArgType::OUTPUT_EXISTING;
}

// The forwarded task as this level's arguments: the blob opened and every
// tensor validated, re-exported (nothing mapped) and tagged from the write
// mask, the scalars copied. False (args cleared) when the blob is refused.
bool forwarded_args(const ipc::TaskView& task, const CallConfig& config, ImportRegistry& registry, TaskArgs& args) {
    args.clear();
    TaskArgsView view;
    if (!TaskArgsView::open(task.blob.data(), task.blob.size(), view).ok()) return false;
    Tensor t;
    for (int32_t i = 0; i < view.tensor_count(); ++i) {
        if (!view.tensor(i, t).ok()) {
            args.clear();
            return false;
        }
        const Tensor r = registry.reexport(t);
        args.add_tensor(r, forwarded_tag(config, static_cast<size_t>(i), r));
    }
    for (int32_t i = 0; i < view.scalar_count(); ++i) args.add_scalar(view.scalar(i));
    return true;
}

// Made in L4 child `index` right after fork: an L3 Worker with one chip, and
// the handler that forwards each task to that chip (failures name L3[index]).
ipc::TaskHandler forwarding_handler(uint32_t index, ipc::SpinPolicy spin) {
    struct Forwarder {
        Worker l3;
        ImportRegistry registry;
        TaskArgs args;  // reused: the engine encodes the blob at submit
        explicit Forwarder(WorkerConfig c) : l3(std::move(c)) {}
    };
    auto f = std::make_shared<Forwarder>(l3_config(1, spin));
    f->l3.init();
    return [f, name = "L3[" + std::to_string(index) + "]"](const ipc::TaskView& task) -> ipc::TaskOutcome {
        const CallConfig config = call_config_from_bytes(task.config.bytes);
        try {
            if (!forwarded_args(task, config, f->registry, f->args))
                return {ipc::TaskError::BAD_ARGUMENTS, name + ": the blob was refused"};
            const MemberSubmit m{&f->args, 0};
            f->l3.submit(TaskKind::NEXT_LEVEL, task.callable_id, {&m, 1}, config);
            f->l3.wait();
        } catch (const std::exception& e) {
            return {ipc::TaskError::TASK_FAILED, name + " -> " + e.what()};
        }
        return {};
    };
}

WorkerConfig l4_config(uint32_t workers, ipc::SpinPolicy spin) {
    WorkerConfig c;
    c.num_workers = workers;
    c.spin = spin;
    c.worker_handler = [spin](uint32_t index) { return forwarding_handler(index, spin); };
    return c;
}

// The one-tensor task of bench_worker's chip round trip (the chip decodes it).
TaskArgs one_tensor_args(benchmark::State& state) {
    const std::vector<std::byte> blob = bench::one_tensor_blob();
    TaskArgs args;
    TaskArgsView view;
    Tensor t;
    if (!TaskArgsView::open(blob.data(), blob.size(), view).ok() || !view.tensor(0, t).ok()) {
        state.SkipWithError("baseline blob refused");
        return args;
    }
    args.add_tensor(t, TensorArgType::INPUT);
    return args;
}

void BM_RawSpinPingPong(benchmark::State& state) { bench::raw_spin_ping_pong(state); }

// The forwarding child's own work per task, in one process: open the blob of
// the one-tensor task, validate, re-export and tag its tensor, copy its scalar.
void BM_ForwardedArgs(benchmark::State& state) {
    const std::vector<std::byte> blob = bench::one_tensor_blob();
    const ipc::TaskView task{1, 0, {}, blob};
    ImportRegistry registry;
    TaskArgs args;
    for (auto _ : state) {
        if (!forwarded_args(task, CallConfig{}, registry, args)) state.SkipWithError("blob refused");
        benchmark::DoNotOptimize(args);
    }
    if (registry.stats().maps != 0) state.SkipWithError("forwarding mapped a backing");
}

// Baseline: L3 -> chip, one one-tensor task per iteration.
void BM_L3RoundTrip(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(l3_config(1, policy_of(state.range(0))));
    w.init();
    const TaskArgs args = one_tensor_args(state);
    bench::worker_round_trips(state, w, TaskKind::NEXT_LEVEL, MemberSubmit{&args, 0});
    w.close();
}

// Control: the L3 round trip while a third process spins as a waiter does
// (yielding after 2 us). A hot L4 round trip keeps three processes spinning
// (L4's wait(), the L3 child's wait(), the chip); this shows what a third
// spinner alone costs the two-process round trip on this machine.
void BM_L3RoundTripThirdSpinner(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    ipc::SharedRegion region(sizeof(uint32_t));
    auto* stop = new (region.data()) uint32_t{0};
    ipc::ChildProcess spinner = ipc::ChildProcess::spawn([stop] {
        (void)bench::spin_yield_change(*stop, 0, ipc::Clock::now() + bench::CHILD_IDLE_LIMIT);
        return 0;
    });
    {
        Worker w(l3_config(1, policy_of(state.range(0))));
        w.init();
        const TaskArgs args = one_tensor_args(state);
        bench::worker_round_trips(state, w, TaskKind::NEXT_LEVEL, MemberSubmit{&args, 0});
        w.close();
    }
    bench::at(*stop).store(bench::STOP, std::memory_order_release);
    bench::finish_child(state, spinner);
}

// The same task L4 -> L3 -> chip: one forwarding hop more.
void BM_L4RoundTrip(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(l4_config(1, policy_of(state.range(0))));
    w.init();
    const TaskArgs args = one_tensor_args(state);
    bench::worker_round_trips(state, w, TaskKind::NEXT_LEVEL, MemberSubmit{&args, 0});
    w.close();
}

void independent_tasks(benchmark::State& state, Worker& w) {
    const int64_t n = state.range(1);
    const TaskArgs args;
    const MemberSubmit lanes[2] = {{&args, 0}, {&args, 1}};
    for (auto _ : state) {
        for (int64_t i = 0; i < n; ++i) w.submit(TaskKind::NEXT_LEVEL, 0, {&lanes[i & 1], 1}, TaskConfig{});
        w.wait();
    }
    state.SetItemsProcessed(state.iterations() * n);
}

// Baseline: N independent empty tasks over 2 chips of one L3.
void BM_L3IndependentTasks(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(l3_config(2, policy_of(state.range(0))));
    w.init();
    independent_tasks(state, w);
    w.close();
}

// N independent empty tasks over 2 L3 children of an L4, one chip each.
void BM_L4IndependentTasks(benchmark::State& state) {
    state.SetLabel(regime_name(state.range(0)));
    Worker w(l4_config(2, policy_of(state.range(0))));
    w.init();
    independent_tasks(state, w);
    w.close();
}

}  // namespace

BENCHMARK(BM_RawSpinPingPong)->UseRealTime();
BENCHMARK(BM_ForwardedArgs);
BENCHMARK(BM_L3RoundTrip)->ArgName("regime")->Arg(HOT)->Arg(ADAPTIVE)->UseRealTime();
BENCHMARK(BM_L3RoundTripThirdSpinner)->ArgName("regime")->Arg(HOT)->UseRealTime();
BENCHMARK(BM_L4RoundTrip)->ArgName("regime")->Arg(HOT)->Arg(ADAPTIVE)->UseRealTime();
BENCHMARK(BM_L3IndependentTasks)
    ->ArgNames({"regime", "n"})
    ->Args({HOT, 10'000})
    ->Args({ADAPTIVE, 10'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_L4IndependentTasks)
    ->ArgNames({"regime", "n"})
    ->Args({HOT, 10'000})
    ->Args({ADAPTIVE, 10'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
