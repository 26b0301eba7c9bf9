// MailboxRing: several tasks in flight on one lane, served and reported
// strictly in publish order; a task whose in-lane producer failed is skipped
// (transitively), an independent one still runs; a killed child fails every
// task in flight; a deadline overrun loses the rest of the lane, and a queued
// task's deadline counts once it is the oldest (and can be restarted then); a control
// message queued behind a task never overtakes it; a task withdrawn before the
// child began it is skipped unrun, and so is a task chained on it; bad masks
// and depths are refused without publishing.
#include <gtest/gtest.h>

#include <csignal>

#include <sys/wait.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox_ring.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

int serve_echo_ring(MailboxRing& ring, std::vector<int>* order = nullptr) {
    return serve_ring(ring, [order](const TaskView& t) { return echo(t, order); }, SpinPolicy{}, 20'000ms);
}

uint64_t publish(MailboxRing& ring, uint64_t callable, std::span<const std::byte> blob = {}, uint32_t mask = 0,
                 Deadline deadline = NO_DEADLINE) {
    uint64_t seq = 0;
    EXPECT_EQ(ring.publish(callable, CallConfig{}, blob, seq, deadline, mask), PublishStatus::OK);
    return seq;
}

int exit_code(const std::optional<int>& status) {
    if (!status || !WIFEXITED(*status)) return -1;
    return WEXITSTATUS(*status);
}

}  // namespace

TEST(MailboxRing, RejectsADepthOutsideItsRange) {
    Doorbell bell;
    EXPECT_THROW(MailboxRing(MailboxRingConfig{64, 0}, bell), std::invalid_argument);
    EXPECT_THROW(MailboxRing(MailboxRingConfig{64, MAX_RING_DEPTH + 1}, bell), std::invalid_argument);
    EXPECT_EQ(MailboxRing(MailboxRingConfig{64, MAX_RING_DEPTH}, bell).depth(), MAX_RING_DEPTH);
}

TEST(MailboxRing, HoldsDepthTasksThenIsBusyAndRefusesBadMasks) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 2}, bell);
    uint64_t seq = 0;
    // Nothing published yet: no task one back to name.
    EXPECT_EQ(ring.publish(1, CallConfig{}, {}, seq, NO_DEADLINE, 1), PublishStatus::BAD_AFTER_MASK);
    EXPECT_EQ(publish(ring, 1), 1u);
    // Depth 2 remembers one task back: bit 1 (two back) is out of reach.
    EXPECT_EQ(ring.publish(1, CallConfig{}, {}, seq, NO_DEADLINE, 2), PublishStatus::BAD_AFTER_MASK);
    const std::vector<std::byte> big(65);
    EXPECT_EQ(ring.publish(1, CallConfig{}, big, seq), PublishStatus::BLOB_TOO_LARGE);
    EXPECT_EQ(ring.in_flight(), 1u);
    EXPECT_EQ(publish(ring, 1, {}, 1), 2u);
    EXPECT_TRUE(ring.full());
    EXPECT_EQ(ring.publish(1, CallConfig{}, {}, seq), PublishStatus::BUSY);
    EXPECT_EQ(ring.in_flight_seqs(), (std::vector<uint64_t>{1, 2}));
    EXPECT_FALSE(ring.poll_result().has_value());  // no child serves it: nothing to report
    EXPECT_EQ(ring.in_flight(), 2u);
}

TEST(MailboxRing, ResultsComeInPublishOrderAcrossManyTasks) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{4096, 3}, bell);
    ChildProcess child = ChildProcess::spawn([&ring] { return serve_echo_ring(ring); });
    const auto blob = bytes_of("x");
    uint64_t published = 0;
    uint64_t collected = 0;
    while (collected < 3000) {
        while (published < 3000 && !ring.full()) {
            ++published;
            // Every 7th task fails; its successor names it and must come back SKIPPED.
            const uint64_t callable = published % 7 == 0 ? 2 : 1;
            const uint32_t mask = published % 7 == 1 && published > 1 ? 1u : 0u;
            ASSERT_EQ(publish(ring, callable, blob, mask), published);
        }
        const TaskResult r = next_result(ring, bell);
        ++collected;
        ASSERT_EQ(r.task_seq, collected);
        const TaskError want = collected % 7 == 0                    ? TaskError::TASK_FAILED
                               : collected % 7 == 1 && collected > 1 ? TaskError::SKIPPED
                                                                     : TaskError::NONE;
        ASSERT_EQ(r.error, want) << "task " << collected << ": " << r.message;
    }
    ring.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(MailboxRing, AFailedProducerSkipsItsDependentsTransitivelyButNotOthers) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{4096, 4}, bell);
    ChildProcess child = ChildProcess::spawn([&ring] { return serve_echo_ring(ring); });
    publish(ring, 2, bytes_of("producer broke"));  // 1 fails
    publish(ring, 1, {}, 0b1);                       // 2 after 1: skipped
    publish(ring, 1, {}, 0b1);                       // 3 after 2 (skipped): skipped
    publish(ring, 1, {}, 0);                         // 4 independent: runs
    const TaskResult r1 = next_result(ring, bell);
    EXPECT_EQ(r1.error, TaskError::TASK_FAILED);
    EXPECT_EQ(r1.message, "producer broke");
    const TaskResult r2 = next_result(ring, bell);
    EXPECT_EQ(r2.error, TaskError::SKIPPED);
    EXPECT_EQ(r2.message, "not run: task 1 ahead of it on this lane, a producer of it, failed");
    const TaskResult r3 = next_result(ring, bell);
    EXPECT_EQ(r3.error, TaskError::SKIPPED);
    EXPECT_EQ(r3.message, "not run: task 2 ahead of it on this lane, a producer of it, failed");
    EXPECT_TRUE(next_result(ring, bell).ok());
    // A producer three back (bit 2) that succeeded, one back that failed: skipped.
    publish(ring, 1);                     // 5 ok
    publish(ring, 2, bytes_of("again"));  // 6 fails
    publish(ring, 1, {}, 0b100);          // 7 after 4 only (ok): runs
    publish(ring, 1, {}, 0b101);          // 8 after 7 and 5... bit 0 = 7 (ok), bit 2 = 5 (ok): runs
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_EQ(next_result(ring, bell).error, TaskError::TASK_FAILED);
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_TRUE(next_result(ring, bell).ok());
    publish(ring, 1, {}, 0b100);  // 9 after 6 (failed): skipped
    EXPECT_EQ(next_result(ring, bell).message, "not run: task 6 ahead of it on this lane, a producer of it, failed");
    EXPECT_TRUE(ring.usable());
    ring.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(MailboxRing, AKilledChildFailsEveryTaskInFlight) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 2}, bell);
    ChildProcess child = ChildProcess::spawn([&ring] { return serve_echo_ring(ring); });
    publish(ring, 3);          // hangs
    publish(ring, 1, {}, 1);   // queued behind it
    ASSERT_TRUE(child.signal(SIGKILL));
    const std::optional<int> status = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(status.has_value());
    ring.mark_child_exited(*status);
    const TaskResult r1 = next_result(ring, bell);
    const TaskResult r2 = next_result(ring, bell);
    EXPECT_EQ(r1.task_seq, 1u);
    EXPECT_EQ(r1.error, TaskError::CHILD_DIED);
    EXPECT_EQ(r1.message, "child killed by signal 9 (Killed) with its task in flight");
    EXPECT_EQ(r2.task_seq, 2u);
    EXPECT_EQ(r2.error, TaskError::CHILD_DIED);
    EXPECT_EQ(ring.in_flight(), 0u);
    EXPECT_FALSE(ring.usable());
    uint64_t seq = 0;
    EXPECT_EQ(ring.publish(1, CallConfig{}, {}, seq), PublishStatus::LANE_DEAD);
    EXPECT_EQ(ring.poison_reason().rfind("CHILD_DIED: child killed by signal 9", 0), 0u) << ring.poison_reason();
}

TEST(MailboxRing, AnOverrunLosesTheLaneAndEveryTaskQueuedBehindIt) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 2}, bell);
    ChildProcess child = ChildProcess::spawn([&ring] { return serve_echo_ring(ring); });
    publish(ring, 3, {}, 0, after(100ms));  // hangs past its deadline
    publish(ring, 1);                        // no deadline of its own
    const TaskResult r1 = next_result(ring, bell);
    EXPECT_EQ(r1.error, TaskError::TIMED_OUT) << r1.message;
    const TaskResult r2 = next_result(ring, bell);
    EXPECT_EQ(r2.error, TaskError::TIMED_OUT);
    EXPECT_EQ(r2.message.rfind("the lane was lost before this task ran (TIMED_OUT: ", 0), 0u) << r2.message;
    EXPECT_FALSE(ring.usable());
    const int status = child.stop(after(50ms));
    EXPECT_TRUE(WIFSIGNALED(status)) << describe_wait_status(status);
}

TEST(MailboxRing, AQueuedTasksDeadlineCountsOnceItIsTheOldest) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 2}, bell);
    // No child: both wait. The first has no deadline, so the lane's is none —
    // a waiter must not wake for the second's, which cannot be reported first.
    publish(ring, 1);
    const Deadline second = after(1ms);
    publish(ring, 1, {}, 0, second);
    EXPECT_EQ(ring.deadline(), NO_DEADLINE);
    std::this_thread::sleep_for(5ms);
    EXPECT_FALSE(ring.poll_result().has_value());
    // The child answers the first; the second, never started and past its deadline, is TIMED_OUT.
    Mailbox& first = ring.slot(0);
    (void)first.begin_task();
    first.finish_ok();
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_EQ(ring.deadline(), second);
    const TaskResult r = next_result(ring, bell);
    EXPECT_EQ(r.error, TaskError::TIMED_OUT);
    EXPECT_EQ(r.message, "the task overran its deadline (never started); the child still holds it");
    EXPECT_FALSE(ring.usable());
}

TEST(MailboxRing, RestartingTheOldestsDeadlineGivesItItsOwnTime) {
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 2}, bell);
    ring.restart_oldest_deadline(after(1ms));  // nothing in flight: nothing to move
    EXPECT_EQ(ring.deadline(), NO_DEADLINE);
    publish(ring, 1);
    publish(ring, 1, {}, 1, after(1ms));  // its deadline passes while the first runs
    std::this_thread::sleep_for(5ms);
    Mailbox& first = ring.slot(0);
    (void)first.begin_task();
    first.finish_ok();
    EXPECT_TRUE(next_result(ring, bell).ok());
    // What the Worker does on collecting a result with another task still in flight.
    const Deadline fresh = after(10'000ms);
    ring.restart_oldest_deadline(fresh);
    EXPECT_EQ(ring.deadline(), fresh);
    EXPECT_FALSE(ring.poll_result().has_value());  // not TIMED_OUT: its own time has just started
    Mailbox& second = ring.slot(1);
    (void)second.begin_task();
    second.finish_ok();
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_TRUE(ring.usable());
}

TEST(MailboxRing, AControlMessageQueuedBehindATaskNeverOvertakesIt) {
    // On a thread of this process so the handler can record the order.
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 4}, bell);
    std::vector<int> order;
    // Published before the server starts, so all four wait in the ring together.
    for (int i = 0; i < 4; ++i) publish(ring, 4, std::vector<std::byte>{static_cast<std::byte>(i)});
    int status = -1;
    std::thread server([&] { status = serve_echo_ring(ring, &order); });
    for (uint64_t i = 1; i <= 4; ++i) EXPECT_EQ(next_result(ring, bell).task_seq, i);
    publish(ring, 4, std::vector<std::byte>{std::byte{4}});
    EXPECT_TRUE(next_result(ring, bell).ok());
    ring.request_shutdown();
    server.join();
    EXPECT_EQ(status, SERVE_SHUTDOWN);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(MailboxRing, AWithdrawnTaskIsSkippedUnrunAndSoIsATaskChainedOnIt) {
    // On a thread of this process so the handler can record what ran.
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 4}, bell);
    std::vector<int> order;
    // Published before the server starts, so none has begun when 2 is withdrawn.
    const uint64_t first = publish(ring, 4, std::vector<std::byte>{std::byte{1}});
    const uint64_t second = publish(ring, 4, std::vector<std::byte>{std::byte{2}});
    publish(ring, 4, std::vector<std::byte>{std::byte{3}}, 0b1);  // after 2
    publish(ring, 4, std::vector<std::byte>{std::byte{4}});       // independent
    EXPECT_TRUE(ring.withdraw(second));
    EXPECT_FALSE(ring.withdraw(second + 100));  // no such task in flight
    int status = -1;
    std::thread server([&] { status = serve_echo_ring(ring, &order); });
    EXPECT_TRUE(next_result(ring, bell).ok());
    const TaskResult withdrawn = next_result(ring, bell);
    EXPECT_EQ(withdrawn.error, TaskError::SKIPPED);
    EXPECT_EQ(withdrawn.message, "not run: its parent withdrew it before it started");
    const TaskResult chained = next_result(ring, bell);
    EXPECT_EQ(chained.error, TaskError::SKIPPED);
    EXPECT_EQ(chained.message, "not run: task 2 ahead of it on this lane, a producer of it, failed");
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_FALSE(ring.withdraw(first));  // finished: nothing to withdraw
    EXPECT_TRUE(ring.usable());
    ring.request_shutdown();
    server.join();
    EXPECT_EQ(status, SERVE_SHUTDOWN);
    EXPECT_EQ(order, (std::vector<int>{1, 4}));
}

TEST(MailboxRing, ATaskPublishedWithdrawnIsSkippedUnrunInItsPlace) {
    // A task withdrawn before it reached the ring (held behind a control
    // message) still takes its place, so the masks of the tasks after it count right.
    Doorbell bell;
    MailboxRing ring(MailboxRingConfig{64, 4}, bell);
    std::vector<int> order;
    int status = -1;
    std::thread server([&] { status = serve_echo_ring(ring, &order); });
    uint64_t seq = 0;
    const std::vector<std::byte> one{std::byte{1}};
    ASSERT_EQ(ring.publish(4, CallConfig{}, one, seq, NO_DEADLINE, 0, /*withdrawn=*/true), PublishStatus::OK);
    publish(ring, 4, std::vector<std::byte>{std::byte{2}}, 0b1);  // after 1
    publish(ring, 4, std::vector<std::byte>{std::byte{3}});       // independent
    const TaskResult withdrawn = next_result(ring, bell);
    EXPECT_EQ(withdrawn.task_seq, seq);
    EXPECT_EQ(withdrawn.error, TaskError::SKIPPED);
    EXPECT_EQ(withdrawn.message, "not run: its parent withdrew it before it started");
    const TaskResult chained = next_result(ring, bell);
    EXPECT_EQ(chained.error, TaskError::SKIPPED);
    EXPECT_EQ(chained.message, "not run: task 1 ahead of it on this lane, a producer of it, failed");
    EXPECT_TRUE(next_result(ring, bell).ok());
    EXPECT_TRUE(ring.usable());
    ring.request_shutdown();
    server.join();
    EXPECT_EQ(status, SERVE_SHUTDOWN);
    EXPECT_EQ(order, (std::vector<int>{3}));
}
