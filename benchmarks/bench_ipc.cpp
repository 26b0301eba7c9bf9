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
// full): real time per task, what pipelining the lane buys at this layer. And
// a chain alternating between two children (BM_CrossLaneChain): each task's
// producer ran on the other child, handed over through the parent or, with
// lane conditions, from child to child.
#include <benchmark/benchmark.h>

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "benchmarks/raw_ping_pong.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/lane_board.h"
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

// A chain of empty tasks alternating between two children's lanes (task n
// needs task n - 1, which ran on the other child): the cross-process hand-off
// between two children. conditions:0 goes through the parent as chips do
// today (it publishes task n once task n - 1's result is back); conditions:1
// publishes ahead, each task naming its producer on the other lane as a lane
// condition (lane_board.h), so one child starts the moment the other finished.
void BM_CrossLaneChain(benchmark::State& state) {
    const bool ahead = state.range(0) != 0;
    Doorbell bell;
    LaneBoard board(2);
    std::array<std::unique_ptr<MailboxRing>, 2> rings;
    for (uint32_t lane = 0; lane < 2; ++lane)
        rings[lane] = std::make_unique<MailboxRing>(MailboxRingConfig{4096, 4, &board, lane}, bell);
    std::array<ChildProcess, 2> children;
    for (uint32_t lane = 0; lane < 2; ++lane) {
        MailboxRing& ring = *rings[lane];
        children[lane] = ChildProcess::spawn([&ring] {
            const int status =
                serve_ring(ring, [](const TaskView&) { return TaskOutcome{}; }, SpinPolicy{}, CHILD_IDLE_LIMIT);
            return status == SERVE_SHUTDOWN ? 0 : status;
        });
    }
    SpinWaiter waiter;
    std::deque<uint32_t> outstanding;  // the lane of each chain task in flight, oldest first
    uint64_t published = 0;            // chain tasks published; task n runs on lane (n - 1) % 2
    std::array<uint64_t, 2> last_seq{};
    const auto publish_next = [&]() {
        const uint32_t lane = static_cast<uint32_t>(published % 2);
        std::vector<LaneCondition> after;
        if (ahead && published > 0) after.push_back(LaneCondition{1 - lane, 0, last_seq[1 - lane]});
        uint64_t seq = 0;
        if (rings[lane]->publish(1, CallConfig{}, {}, seq, NO_DEADLINE, 0, false, after) != PublishStatus::OK)
            return false;
        last_seq[lane] = seq;
        outstanding.push_back(lane);
        ++published;
        return true;
    };
    // The oldest chain task's result (nullopt after 10 s), taken off `outstanding`.
    const auto take_oldest = [&]() -> std::optional<TaskResult> {
        MailboxRing& oldest = *rings[outstanding.front()];
        const Deadline guard = Clock::now() + 10s;
        for (;;) {
            const uint32_t seen = bell.sequence();
            if (std::optional<TaskResult> r = oldest.poll_result()) {
                outstanding.pop_front();
                return r;
            }
            if (Clock::now() >= guard) return std::nullopt;
            bell.wait_past(seen, waiter, guard);
        }
    };
    for (auto _ : state) {
        if (ahead) {
            while (!rings[published % 2]->full() && publish_next()) {}
        } else if (outstanding.empty() && !publish_next()) {
            state.SkipWithError("publish refused");
            break;
        }
        const std::optional<TaskResult> r = take_oldest();
        if (!r || !r->ok()) {
            state.SkipWithError("task failed or timed out");
            break;
        }
    }
    // Drain what is still in flight, then stop both children.
    while (!outstanding.empty() && take_oldest()) {}
    for (uint32_t lane = 0; lane < 2; ++lane) {
        rings[lane]->request_shutdown();
        finish_child(state, children[lane]);
    }
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
BENCHMARK(BM_CrossLaneChain)->ArgName("conditions")->Arg(0)->Arg(1)->UseRealTime();
