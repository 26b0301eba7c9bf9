// What tracing costs per task: the recorder's three calls for one task (submit,
// publish, collect) on their own, and a Worker's submit -> run -> wait round
// trip through one forked sub-worker with a no-op handler, tracing off and on.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>

#include "simpler/engine/trace.h"
#include "simpler/engine/worker.h"

#include "benchmarks/worker_round_trip.h"

using namespace simpler;

namespace {

void BM_TraceRecorderOneTask(benchmark::State& state) {
    TraceRecorder r;
    TaskId task = 1;
    const Dispatch d{TaskHandle{}, TaskKind::SUB, 0, ChildRef{ChildKind::SUB_WORKER, 0}, 3, {}, nullptr};
    for (auto _ : state) {
        Dispatch di = d;
        di.task.id = task;
        r.submitted(di.task, TaskKind::SUB, 3, 1);
        r.published(0, di);
        r.collected(0, "");
        ++task;
        if (r.events().size() >= (size_t{1} << 20)) r.clear();  // stay on the storing path
    }
    benchmark::DoNotOptimize(r.events().data());
}
BENCHMARK(BM_TraceRecorderOneTask);

void BM_WorkerRoundTrip(benchmark::State& state) {
    WorkerConfig c;
    c.num_sub_workers = 1;
    c.sub_handler = [](uint32_t) { return [](const ipc::TaskView&) -> ipc::TaskOutcome { return {}; }; };
    c.close_grace = std::chrono::milliseconds(500);
    c.trace = state.range(0) != 0;
    Worker w(std::move(c));
    w.init();
    const TaskArgs args;
    bench::worker_round_trips(state, w, TaskKind::SUB, MemberSubmit{&args, std::nullopt});
    state.counters["trace_events"] = static_cast<double>(w.trace_events().size());
    w.close();
}
BENCHMARK(BM_WorkerRoundTrip)->ArgName("trace")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
