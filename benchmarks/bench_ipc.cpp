// Cross-process hand-off costs: one round trip parent -> child -> parent.
//
// Baselines, measured in the same run: a raw two-process spin ping-pong (two
// words, both sides spinning; once pure, once yielding after 2 us), a raw futex ping-pong (both sides always sleep
// and always wake), a pipe ping-pong, and decoding a one-tensor argument blob
// alone. Then the mailbox round trip (publish, child decodes the one-tensor
// blob with TaskArgsView, finish_ok, doorbell) in three regimes: hot (both
// waiters spin long enough that every hand-off lands while spinning), cold
// (no spinning: every hand-off wakes a sleeping process) and adaptive (the
// default SpinPolicy). Real time per round trip; the counter `slept` is the
// share of the parent's waits that reached the futex. Last, a chain of
// dependent one-tensor tasks through a MailboxRing of depth 1, 2 and 4 (each
// task names the one before it as its producer; the parent keeps the ring
// full): real time per task, what pipelining the lane buys at this layer.
#include <benchmark/benchmark.h>

#include <vector>

#include "benchmarks/raw_ping_pong.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/mailbox_ring.h"
#include "simpler/ipc/spin_wait.h"

using namespace simpler::ipc;
using namespace std::chrono_literals;

namespace {

using simpler::bench::CHILD_IDLE_LIMIT;
using simpler::bench::decode;
using simpler::bench::finish_child;
using simpler::bench::one_tensor_blob;

void BM_RawSpinPingPong(benchmark::State& state) { simpler::bench::raw_spin_ping_pong(state); }
void BM_RawSpinYieldPingPong(benchmark::State& state) { simpler::bench::raw_spin_yield_ping_pong(state); }
void BM_RawFutexPingPong(benchmark::State& state) { simpler::bench::raw_futex_ping_pong(state); }
void BM_RawPipePingPong(benchmark::State& state) { simpler::bench::raw_pipe_ping_pong(state); }
void BM_DecodeOneTensorBlob(benchmark::State& state) { simpler::bench::decode_one_tensor_blob(state); }

void mailbox_round_trip(benchmark::State& state, SpinPolicy child_policy, SpinPolicy parent_policy) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{}, bell);
    ChildProcess child = ChildProcess::spawn([&mb, child_policy] {
        SpinWaiter waiter(child_policy);
        for (;;) {
            const ChildWake w = mb.wait_request(waiter, Clock::now() + CHILD_IDLE_LIMIT);
            if (w != ChildWake::TASK) return w == ChildWake::SHUTDOWN ? 0 : 3;
            const TaskView t = mb.begin_task();
            if (decode(t.blob)) {
                mb.finish_ok();
            } else {
                mb.finish_failed(TaskError::BAD_ARGUMENTS, "blob refused");
            }
        }
    });
    const std::vector<std::byte> blob = one_tensor_blob();
    SpinWaiter waiter(parent_policy);
    CallConfig cfg{};
    for (auto _ : state) {
        uint64_t seq = 0;
        if (mb.publish(1, cfg, blob, seq) != PublishStatus::OK) {
            state.SkipWithError("publish refused");
            break;
        }
        const std::optional<TaskResult> r = wait_result(mb, bell, waiter, Clock::now() + 10s);
        if (!r || !r->ok()) {
            state.SkipWithError("task failed or timed out");
            break;
        }
    }
    const SpinStats& s = waiter.stats();
    state.counters["slept"] = s.waits ? static_cast<double>(s.sleeps) / static_cast<double>(s.waits) : 0.0;
    state.counters["blob_bytes"] = static_cast<double>(blob.size());
    mb.request_shutdown();
    finish_child(state, child);
}

void BM_MailboxRoundTripHot(benchmark::State& state) {
    mailbox_round_trip(state, fixed_spin_policy(1ms), fixed_spin_policy(1ms));
}
void BM_MailboxRoundTripCold(benchmark::State& state) {
    mailbox_round_trip(state, never_spin_policy(), never_spin_policy());
}
void BM_MailboxRoundTripAdaptive(benchmark::State& state) { mailbox_round_trip(state, SpinPolicy{}, SpinPolicy{}); }

void BM_RingChain(benchmark::State& state) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{DEFAULT_BLOB_CAPACITY, static_cast<uint32_t>(state.range(0))}, bell);
    ChildProcess child = ChildProcess::spawn([&ring] {
        const int status = serve_ring(
            ring,
            [](const TaskView& t) -> TaskOutcome {
                if (decode(t.blob)) return {};
                return {TaskError::BAD_ARGUMENTS, "blob refused"};
            },
            SpinPolicy{}, CHILD_IDLE_LIMIT);
        return status == SERVE_SHUTDOWN ? 0 : status;
    });
    const std::vector<std::byte> blob = one_tensor_blob();
    SpinWaiter waiter;
    // Depth 1 never has the producer in flight: it names none.
    const uint32_t after = ring.depth() > 1 ? 1u : 0u;
    uint64_t published = 0;
    for (auto _ : state) {
        while (!ring.full()) {
            uint64_t seq = 0;
            if (ring.publish(1, CallConfig{}, blob, seq, NO_DEADLINE, published > 0 ? after : 0u) !=
                PublishStatus::OK) {
                state.SkipWithError("publish refused");
                break;
            }
            ++published;
        }
        std::optional<TaskResult> r;
        const Deadline guard = Clock::now() + 10s;
        for (;;) {
            const uint32_t seen = bell.sequence();
            if ((r = ring.poll_result()) || Clock::now() >= guard) break;
            bell.wait_past(seen, waiter, guard);
        }
        if (!r || !r->ok()) {
            state.SkipWithError("task failed or timed out");
            break;
        }
    }
    ring.request_shutdown();
    finish_child(state, child);
}

}  // namespace

BENCHMARK(BM_RawSpinPingPong)->UseRealTime();
BENCHMARK(BM_RawSpinYieldPingPong)->UseRealTime();
BENCHMARK(BM_RawFutexPingPong)->UseRealTime();
BENCHMARK(BM_RawPipePingPong)->UseRealTime();
BENCHMARK(BM_DecodeOneTensorBlob);
BENCHMARK(BM_MailboxRoundTripHot)->UseRealTime();
BENCHMARK(BM_MailboxRoundTripCold)->UseRealTime();
BENCHMARK(BM_MailboxRoundTripAdaptive)->UseRealTime();
BENCHMARK(BM_RingChain)->Arg(1)->Arg(2)->Arg(4)->UseRealTime();
