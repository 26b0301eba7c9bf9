// LaneBoard and lane conditions: a task on one lane waits for a producer on
// another lane, with the parent out of the path. The board's words (outcomes,
// a recycled one, a lost lane); the decoder's refusals, each by name; a wait
// that sleeps until the producer completes; and, with a child process serving
// each lane: a consumer that starts only after its producer finished and reads
// what it wrote, one skipped because its producer failed or its producer's
// child died (naming the producer), one withdrawn or shut down while it waits,
// and conditions refused at publish or by the child.
#include <gtest/gtest.h>

#include <csignal>

#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/lane_board.h"
#include "simpler/ipc/mailbox_ring.h"
#include "simpler/ipc/shared_region.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

// Words the test's children share with the parent (made before fork).
struct Shared {
    uint32_t gate;      // the producer (callable 5) waits until the parent sets it
    uint32_t produced;  // what the producer wrote: 42
};

std::atomic_ref<uint32_t> word(uint32_t& w) { return std::atomic_ref<uint32_t>(w); }

// Callable 5: waits for the gate (10 s at most), then writes 42. Callable 6:
// succeeds only when it reads 42. Anything else: ipc_test::echo.
TaskOutcome handle(const TaskView& task, Shared& shared) {
    if (task.callable_id == 5) {
        const Deadline guard = after(10'000ms);
        while (word(shared.gate).load(std::memory_order_acquire) == 0) {
            if (Clock::now() > guard) return {TaskError::TASK_FAILED, "the gate never opened"};
            std::this_thread::sleep_for(1ms);
        }
        word(shared.produced).store(42, std::memory_order_relaxed);  // the board's release orders it
        return {};
    }
    if (task.callable_id == 6) {
        const uint32_t seen = word(shared.produced).load(std::memory_order_relaxed);
        if (seen == 42) return {};
        return {TaskError::TASK_FAILED, "ran before its producer: read " + std::to_string(seen)};
    }
    return echo(task);
}

ChildProcess serve(MailboxRing& ring, Shared& shared) {
    return ChildProcess::spawn([&ring, &shared] {
        return serve_ring(ring, [&shared](const TaskView& t) { return handle(t, shared); }, SpinPolicy{}, 20'000ms);
    });
}

uint64_t publish(MailboxRing& ring, uint64_t callable, std::vector<LaneCondition> conditions = {}) {
    uint64_t seq = 0;
    EXPECT_EQ(ring.publish(callable, CallConfig{}, {}, seq, NO_DEADLINE, 0, false, conditions), PublishStatus::OK);
    return seq;
}

int exit_code(const std::optional<int>& status) {
    if (!status || !WIFEXITED(*status)) return -1;
    return WEXITSTATUS(*status);
}

// Two lanes on one board, each served by a child process.
struct TwoLanes {
    Doorbell bell;
    LaneBoard board{2};
    SharedRegion region{sizeof(Shared)};
    Shared& shared = *static_cast<Shared*>(region.data());
    MailboxRing producer{MailboxRingConfig{256, 4, &board, 0}, bell};
    MailboxRing consumer{MailboxRingConfig{256, 4, &board, 1}, bell};
    ChildProcess producer_child = serve(producer, shared);
    ChildProcess consumer_child = serve(consumer, shared);

    void open_gate() { word(shared.gate).store(1, std::memory_order_release); }
    void shut_down() {
        open_gate();
        producer.request_shutdown();
        consumer.request_shutdown();
        EXPECT_EQ(exit_code(consumer_child.wait_exit(after(10'000ms))), 0);
        if (!producer_child.reaped()) {
            EXPECT_EQ(exit_code(producer_child.wait_exit(after(10'000ms))), 0);
        }
    }
};

}  // namespace

TEST(LaneBoard, RefusesALaneCountOutsideItsRange) {
    EXPECT_THROW(LaneBoard(0), std::invalid_argument);
    EXPECT_THROW(LaneBoard(MAX_BOARD_LANES + 1), std::invalid_argument);
    EXPECT_EQ(LaneBoard(3).lanes(), 3u);
}

TEST(LaneBoard, KeepsEachOutcomeAndALostLaneWakesWhatItHadNotCompleted) {
    LaneBoard board(2);
    const LaneCondition first{0, 0, 1};
    const LaneCondition second{0, 0, 2};
    const LaneCondition third{0, 0, 3};
    EXPECT_EQ(board.look(first), ConditionState::PENDING);
    const uint32_t before = board.progress(0).changes.value;
    board.complete(0, 1, true);
    board.complete(0, 2, false);
    EXPECT_EQ(board.progress(0).changes.value, before + 2);  // each completion bumps the word waiters sleep on
    EXPECT_EQ(board.look(first), ConditionState::SUCCEEDED);
    EXPECT_EQ(board.look(second), ConditionState::FAILED);
    EXPECT_EQ(board.look(third), ConditionState::PENDING);
    board.mark_lost(0);
    EXPECT_TRUE(board.lost(0));
    EXPECT_EQ(board.look(third), ConditionState::LOST);
    EXPECT_EQ(board.look(first), ConditionState::SUCCEEDED);  // what it completed stays known
    EXPECT_EQ(condition_failure(third, ConditionState::LOST, board),
              "not run: its producer, task 3 of lane 0, was lost with its lane (the lane's child died)");
    EXPECT_EQ(condition_failure(second, ConditionState::FAILED, board),
              "not run: its producer, task 2 of lane 0, failed or was skipped");
    EXPECT_FALSE(board.lost(1));
}

TEST(LaneBoard, AnOutcomeOlderThanTheWindowIsRecycledNotMistaken) {
    LaneBoard board(2);
    for (uint64_t s = 1; s <= OUTCOME_WINDOW + 1; ++s) board.complete(1, s, s != 1);
    const LaneCondition oldest{1, 0, 1};
    EXPECT_EQ(board.look(oldest), ConditionState::RECYCLED);  // task 65 took its place: never "succeeded"
    EXPECT_EQ(board.look(LaneCondition{1, 0, 2}), ConditionState::SUCCEEDED);
    EXPECT_EQ(condition_failure(oldest, ConditionState::RECYCLED, board),
              "not run: lane 1 no longer keeps the outcome of task 1 (it has completed 65 and keeps the last 64)");
}

TEST(LaneConditions, TheDecoderRefusesEachRuleByName) {
    LaneBoard board(3);
    board.note_published(0, 5);
    board.note_published(2, 1);
    std::array<LaneCondition, MAX_LANE_CONDITIONS> raw{};
    raw[0] = {0, 0, 5};
    raw[1] = {2, 0, 1};
    EXPECT_EQ(check_conditions(raw, 2, board, 1), std::nullopt);
    EXPECT_EQ(check_conditions(raw, 0, board, 1), std::nullopt);
    EXPECT_EQ(check_conditions(raw, MAX_LANE_CONDITIONS + 1, board, 1), "condition count 5 is over the maximum of 4");
    EXPECT_EQ(check_conditions(raw, 0xFFFFFFFFu, board, 1), "condition count 4294967295 is over the maximum of 4");
    raw[1] = {7, 0, 1};
    EXPECT_EQ(check_conditions(raw, 2, board, 1), "condition 1: lane 7 is not a lane of this Worker (it has 3)");
    raw[1] = {1, 0, 1};
    EXPECT_EQ(check_conditions(raw, 2, board, 1),
              "condition 1: names the task's own lane 1 (a producer on the same lane is named by the after mask)");
    raw[1] = {2, 0, 0};
    EXPECT_EQ(check_conditions(raw, 2, board, 1),
              "condition 1: sequence 0 names no task (a lane's tasks count from 1)");
    raw[0] = {0, 0, 6};
    EXPECT_EQ(check_conditions(raw, 1, board, 1),
              "condition 0: task 6 of lane 0 was never published (the lane has published 5)");
}

TEST(LaneBoard, AWaiterSleepsUntilTheProducerCompletes) {
    LaneBoard board(2);
    SpinWaiter waiter(never_spin_policy());
    const LaneCondition c{0, 0, 1};
    EXPECT_EQ(board.wait(c, waiter, after(20ms)), ConditionState::PENDING);  // its deadline, nothing else
    std::atomic<bool> waiting{false};
    std::optional<ConditionState> seen;
    std::thread consumer([&] {
        waiting.store(true);
        seen = board.wait(c, waiter, after(10'000ms));
    });
    while (!waiting.load()) std::this_thread::yield();
    board.complete(0, 1, true);
    consumer.join();
    EXPECT_EQ(seen, ConditionState::SUCCEEDED);
    EXPECT_GE(waiter.stats().sleeps, 1u);  // it slept on the futex, never spun (idle means idle)
    EXPECT_EQ(waiter.stats().spin_hits, 0u);
}

TEST(LaneConditions, AConsumerStartsOnlyAfterItsProducerOnAnotherLaneAndReadsWhatItWrote) {
    TwoLanes lanes;
    const uint64_t p = publish(lanes.producer, 5);  // waits at the gate
    const uint64_t c = publish(lanes.consumer, 6, {{0, 0, p}});
    // The producer is held: the consumer is not answered, however long it is given.
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(lanes.consumer.poll_result().has_value());
    lanes.open_gate();
    const TaskResult consumed = next_result(lanes.consumer, lanes.bell);
    EXPECT_TRUE(consumed.ok()) << consumed.message;
    EXPECT_EQ(consumed.task_seq, c);
    EXPECT_TRUE(next_result(lanes.producer, lanes.bell).ok());
    EXPECT_EQ(lanes.board.completed(0), 1u);
    EXPECT_EQ(lanes.board.completed(1), 1u);
    // Both lanes go on: a second pair, the producer already done when the consumer is published.
    const uint64_t p2 = publish(lanes.producer, 1);
    EXPECT_TRUE(next_result(lanes.producer, lanes.bell).ok());
    publish(lanes.consumer, 1, {{0, 0, p2}});
    EXPECT_TRUE(next_result(lanes.consumer, lanes.bell).ok());
    lanes.shut_down();
}

TEST(LaneConditions, AFailedProducerSkipsItsConsumerNamingItAndTheConsumerLaneGoesOn) {
    TwoLanes lanes;
    const uint64_t p = publish(lanes.producer, 2);  // fails
    publish(lanes.consumer, 1, {{0, 0, p}});
    publish(lanes.consumer, 1);  // no condition: runs
    EXPECT_EQ(next_result(lanes.producer, lanes.bell).error, TaskError::TASK_FAILED);
    const TaskResult skipped = next_result(lanes.consumer, lanes.bell);
    EXPECT_EQ(skipped.error, TaskError::SKIPPED);
    EXPECT_EQ(skipped.message, "not run: its producer, task 1 of lane 0, failed or was skipped");
    EXPECT_TRUE(next_result(lanes.consumer, lanes.bell).ok());
    EXPECT_EQ(lanes.board.look(LaneCondition{1, 0, 1}), ConditionState::FAILED);  // a skip is recorded as one
    lanes.shut_down();
}

TEST(LaneConditions, AProducerWhoseChildDiesWakesItsWaiterWhichFailsNamingIt) {
    TwoLanes lanes;
    const uint64_t p = publish(lanes.producer, 3);  // sleeps until killed
    publish(lanes.consumer, 6, {{0, 0, p}});
    ::kill(lanes.producer_child.pid(), SIGKILL);
    const std::optional<int> status = lanes.producer_child.wait_exit(after(10'000ms));
    ASSERT_TRUE(status.has_value());
    lanes.producer.mark_child_exited(*status);  // what the Worker's reaper does
    const TaskResult skipped = next_result(lanes.consumer, lanes.bell);
    EXPECT_EQ(skipped.error, TaskError::SKIPPED);
    EXPECT_EQ(skipped.message,
              "not run: its producer, task 1 of lane 0, was lost with its lane (the lane's child died)");
    EXPECT_EQ(next_result(lanes.producer, lanes.bell).error, TaskError::CHILD_DIED);
    lanes.shut_down();
}

TEST(LaneConditions, AWaitingConsumerCanBeWithdrawnOrShutDown) {
    TwoLanes lanes;
    const uint64_t p = publish(lanes.producer, 5);  // held at the gate
    const uint64_t c = publish(lanes.consumer, 6, {{0, 0, p}});
    std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(lanes.consumer.withdraw(c));  // it waits on lane 0: not started
    const TaskResult withdrawn = next_result(lanes.consumer, lanes.bell);
    EXPECT_EQ(withdrawn.error, TaskError::SKIPPED);
    EXPECT_EQ(withdrawn.message, "not run: its parent withdrew it before it started");
    // Another consumer waits; the consumer's child is asked to stop and does, without it.
    publish(lanes.consumer, 6, {{0, 0, p}});
    std::this_thread::sleep_for(20ms);
    lanes.consumer.request_shutdown();
    EXPECT_EQ(exit_code(lanes.consumer_child.wait_exit(after(10'000ms))), SERVE_SHUTDOWN);
    lanes.open_gate();
    EXPECT_TRUE(next_result(lanes.producer, lanes.bell).ok());
    lanes.producer.request_shutdown();
    EXPECT_EQ(exit_code(lanes.producer_child.wait_exit(after(10'000ms))), 0);
}

TEST(LaneConditions, ConditionsAreRefusedAtPublishAndByTheChild) {
    TwoLanes lanes;
    uint64_t seq = 0;
    const std::vector<LaneCondition> five(MAX_LANE_CONDITIONS + 1, LaneCondition{0, 0, 1});
    EXPECT_EQ(lanes.consumer.publish(1, CallConfig{}, {}, seq, NO_DEADLINE, 0, false, five),
              PublishStatus::BAD_CONDITIONS);
    Doorbell bell;
    MailboxRing boardless(MailboxRingConfig{256, 2}, bell);
    const std::vector<LaneCondition> one{LaneCondition{0, 0, 1}};
    EXPECT_EQ(boardless.publish(1, CallConfig{}, {}, seq, NO_DEADLINE, 0, false, one), PublishStatus::BAD_CONDITIONS);
    EXPECT_EQ(boardless.in_flight(), 0u);
    EXPECT_THROW(MailboxRing(MailboxRingConfig{256, 2, &lanes.board, 2}, bell), std::invalid_argument);
    // The child decodes what the frame holds: its own lane, then a task the producer lane never published.
    publish(lanes.consumer, 1, {{1, 0, 1}});
    TaskResult refused = next_result(lanes.consumer, lanes.bell);
    EXPECT_EQ(refused.error, TaskError::BAD_ARGUMENTS);
    EXPECT_EQ(refused.message,
              "lane conditions: condition 0: names the task's own lane 1 (a producer on the same lane is named by the "
              "after mask)");
    publish(lanes.consumer, 1, {{0, 0, 9}});
    refused = next_result(lanes.consumer, lanes.bell);
    EXPECT_EQ(refused.error, TaskError::BAD_ARGUMENTS);
    EXPECT_EQ(refused.message,
              "lane conditions: condition 0: task 9 of lane 0 was never published (the lane has published 0)");
    lanes.shut_down();
}
