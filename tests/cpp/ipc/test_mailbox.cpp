// Mailbox: the frame layout pinned from outside, round trips with a forked
// child, failures as data, the sticky shutdown word, the error message's
// truncation, and refusal of impossible values a corrupted child could write.
#include <gtest/gtest.h>

#include <csignal>

#include <sys/wait.h>

#include <cstddef>
#include <string>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

int exit_code(const std::optional<int>& status) {
    if (!status || !WIFEXITED(*status)) return -1;
    return WEXITSTATUS(*status);
}

TaskResult run_one(Mailbox& mb, const Doorbell& bell, uint64_t callable, std::span<const std::byte> blob) {
    uint64_t seq = 0;
    EXPECT_EQ(mb.publish(callable, CallConfig{}, blob, seq), PublishStatus::OK);
    SpinWaiter waiter;
    std::optional<TaskResult> r = wait_result(mb, bell, waiter, after(10'000ms));
    EXPECT_TRUE(r.has_value()) << "no result within 10 s";
    if (!r) return TaskResult{TaskError::TIMED_OUT, seq, "test bound"};
    EXPECT_EQ(r->task_seq, seq);
    return *r;
}

}  // namespace

TEST(MailboxFrame, LayoutIsPinned) {
    EXPECT_EQ(sizeof(MailboxFrame), 4480u);
    EXPECT_EQ(offsetof(MailboxFrame, request), 64u);
    EXPECT_EQ(offsetof(MailboxFrame, shutdown), 72u);
    EXPECT_EQ(offsetof(MailboxFrame, state), 128u);
    EXPECT_EQ(offsetof(MailboxFrame, error_code), 132u);
    EXPECT_EQ(offsetof(MailboxFrame, callable_id), 192u);
    EXPECT_EQ(offsetof(MailboxFrame, task_seq), 208u);
    EXPECT_EQ(offsetof(MailboxFrame, after_mask), 216u);
    EXPECT_EQ(offsetof(MailboxFrame, condition_count), 220u);
    EXPECT_EQ(offsetof(MailboxFrame, config), 256u);
    EXPECT_EQ(offsetof(MailboxFrame, conditions), 320u);
    EXPECT_EQ(offsetof(MailboxFrame, error_message), 384u);
    EXPECT_EQ(sizeof(SharedWord), 8u);
}

TEST(Mailbox, RejectsACapacityOfZeroOrTooLarge) {
    Doorbell bell;
    EXPECT_THROW(Mailbox(MailboxConfig{0}, bell), std::invalid_argument);
    EXPECT_THROW(Mailbox(MailboxConfig{MAX_BLOB_CAPACITY + 1}, bell), std::invalid_argument);
}

TEST(Mailbox, NewFrameIsIdleAndStamped) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    EXPECT_EQ(mb.frame().magic, MAILBOX_MAGIC);
    EXPECT_EQ(mb.frame().layout_version, MAILBOX_LAYOUT_VERSION);
    EXPECT_EQ(mb.frame().state, static_cast<uint32_t>(MailboxState::IDLE));
    EXPECT_FALSE(mb.in_flight());
    EXPECT_TRUE(mb.usable());
    EXPECT_EQ(mb.poll_result(), std::nullopt);
}

TEST(Mailbox, ChildReceivesCallableConfigAndBlobBytes) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] {
        SpinWaiter waiter;
        if (mb.wait_request(waiter, after(10'000ms)) != ChildWake::TASK) return 10;
        const TaskView t = mb.begin_task();
        if (t.callable_id != 0xABCDEF0123ull) return 11;
        if (t.config.bytes[0] != 7 || t.config.bytes[63] != 9) return 12;
        const std::string blob(reinterpret_cast<const char*>(t.blob.data()), t.blob.size());
        if (blob != "hello blob") return 13;
        mb.finish_ok();
        return mb.wait_request(waiter, after(10'000ms)) == ChildWake::SHUTDOWN ? 0 : 14;
    });
    CallConfig cfg{};
    cfg.bytes[0] = 7;
    cfg.bytes[63] = 9;
    const auto blob = bytes_of("hello blob");
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(0xABCDEF0123ull, cfg, blob, seq), PublishStatus::OK);
    EXPECT_EQ(mb.publish(1, cfg, blob, seq), PublishStatus::BUSY);
    SpinWaiter waiter;
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->ok()) << r->message;
    EXPECT_FALSE(mb.in_flight());
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, ManyTasksBackToBackKeepTheirOrder) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    const auto blob = bytes_of("x");
    uint64_t last = 0;
    for (int i = 0; i < 5000; ++i) {
        const TaskResult r = run_one(mb, bell, i % 7 == 0 ? 2 : 1, blob);
        ASSERT_EQ(r.error, i % 7 == 0 ? TaskError::TASK_FAILED : TaskError::NONE) << "task " << i;
        ASSERT_EQ(r.task_seq, last + 1);
        // A taken result's state stays until the next publish writes TASK_READY over it.
        ASSERT_EQ(mb.frame().state, static_cast<uint32_t>(i % 7 == 0 ? MailboxState::FAILED : MailboxState::DONE));
        last = r.task_seq;
    }
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, FailureCarriesCodeAndMessage) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    const TaskResult failed = run_one(mb, bell, 2, bytes_of("ValueError: bad shape"));
    EXPECT_EQ(failed.error, TaskError::TASK_FAILED);
    EXPECT_EQ(failed.message, "ValueError: bad shape");
    const TaskResult unknown = run_one(mb, bell, 99, {});
    EXPECT_EQ(unknown.error, TaskError::UNKNOWN_CALLABLE);
    EXPECT_EQ(unknown.message, "no such callable");
    EXPECT_TRUE(mb.usable());
    EXPECT_TRUE(run_one(mb, bell, 1, {}).ok());
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, LongMessageIsTruncatedAtACharacterBoundaryAndMarked) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{16384}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    std::string msg = "head:";
    while (msg.size() < 10000) msg += "\xC3\xA9";  // "é", two bytes each
    const TaskResult r = run_one(mb, bell, 2, bytes_of(msg));
    EXPECT_EQ(r.error, TaskError::TASK_FAILED);
    EXPECT_LE(r.message.size(), ERROR_MESSAGE_BYTES - 1);
    EXPECT_GT(r.message.size(), ERROR_MESSAGE_BYTES - 20);
    EXPECT_EQ(r.message.rfind("head:", 0), 0u);
    const std::string mark = " [truncated]";
    ASSERT_GE(r.message.size(), mark.size());
    EXPECT_EQ(r.message.substr(r.message.size() - mark.size()), mark);
    // The kept prefix ends on a whole "é".
    const std::string kept = r.message.substr(5, r.message.size() - 5 - mark.size());
    EXPECT_EQ(kept.size() % 2, 0u);
    EXPECT_EQ(static_cast<unsigned char>(kept.back()), 0xA9u);
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, MessageExactlyAtTheLimitIsKeptWhole) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{8192}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    const std::string msg(ERROR_MESSAGE_BYTES - 1, 'm');
    EXPECT_EQ(run_one(mb, bell, 2, bytes_of(msg)).message, msg);
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, BlobOverCapacityIsRefusedBeforeAnythingIsWritten) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{16}, bell);
    std::vector<std::byte> blob(17);
    uint64_t seq = 0;
    EXPECT_EQ(mb.publish(1, CallConfig{}, blob, seq), PublishStatus::BLOB_TOO_LARGE);
    EXPECT_FALSE(mb.in_flight());
    EXPECT_EQ(mb.frame().state, static_cast<uint32_t>(MailboxState::IDLE));
}

TEST(Mailbox, ShutdownIsStickyAndWakesASleepingChild) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] {
        SpinWaiter waiter(never_spin_policy());
        if (mb.wait_request(waiter, after(10'000ms)) != ChildWake::SHUTDOWN) return 20;
        // Sticky: every later wait says the same at once.
        if (mb.wait_request(waiter, after(10'000ms)) != ChildWake::SHUTDOWN) return 21;
        return mb.shutdown_requested() ? 0 : 22;
    });
    std::this_thread::sleep_for(20ms);  // let the child fall asleep
    mb.request_shutdown();
    EXPECT_EQ(exit_code(child.wait_exit(after(10'000ms))), 0);
}

TEST(Mailbox, ShutdownWinsOverAPendingTask) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.request_shutdown();
    SpinWaiter waiter;
    EXPECT_EQ(mb.wait_request(waiter, after(1000ms)), ChildWake::SHUTDOWN);
}

TEST(Mailbox, ChildWaitTimesOutWhenNothingArrives) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    SpinWaiter waiter;
    EXPECT_EQ(mb.wait_request(waiter, after(20ms)), ChildWake::TIMED_OUT);
}

TEST(Mailbox, ImpossibleStateWrittenByTheChildPoisonsTheLane) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().state = 77;  // what a corrupted child could store
    const auto r = mb.poll_result();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::PROTOCOL);
    EXPECT_FALSE(mb.usable());
    EXPECT_NE(mb.poison_reason().find("77"), std::string::npos);
    EXPECT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::LANE_DEAD);
}

TEST(Mailbox, ErrorCodeTheChildMayNotReportIsAProtocolError) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().error_code = static_cast<int32_t>(TaskError::CHILD_DIED);
    mb.frame().completed_seq = seq;
    mb.frame().state = static_cast<uint32_t>(MailboxState::FAILED);
    const auto r = mb.poll_result();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::PROTOCOL);
    EXPECT_FALSE(mb.usable());
}

TEST(Mailbox, ResultForAnotherTaskIsAProtocolError) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().completed_seq = seq + 5;
    mb.frame().state = static_cast<uint32_t>(MailboxState::DONE);
    const auto r = mb.poll_result();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::PROTOCOL);
}

TEST(Mailbox, UnterminatedOverlongMessageIsReadWithinTheBuffer) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    std::memset(mb.frame().error_message, 'z', ERROR_MESSAGE_BYTES);  // no NUL anywhere
    mb.frame().message_bytes = 0xFFFFFFFFu;
    mb.frame().error_code = static_cast<int32_t>(TaskError::TASK_FAILED);
    mb.frame().completed_seq = seq;
    mb.frame().state = static_cast<uint32_t>(MailboxState::FAILED);
    const auto r = mb.poll_result();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::TASK_FAILED);
    EXPECT_EQ(r->message.size(), ERROR_MESSAGE_BYTES - 1);
}

TEST(Mailbox, ChildBoundsACorruptBlobLength) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().blob_bytes = 1u << 20;
    EXPECT_FALSE(mb.blob_length_ok());
    EXPECT_TRUE(mb.begin_task().blob.empty());
}

TEST(Mailbox, DeadlineOverrunIsTimedOutAndPoisonsTheLane) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(3, CallConfig{}, {}, seq, after(100ms)), PublishStatus::OK);  // callable 3 hangs
    SpinWaiter waiter;
    // The child never answers: only the task's deadline can end this wait before the 10 s guard.
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::TIMED_OUT) << r->message;
    EXPECT_FALSE(mb.usable());
    const int status = child.stop(after(50ms));  // the hung child is killed and reaped
    EXPECT_TRUE(WIFSIGNALED(status)) << describe_wait_status(status);
}

TEST(Mailbox, AChildThatDiesIdleMakesTheLaneUnusableAndSaysHow) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    EXPECT_EQ(mb.poison_reason(), "");
    mb.mark_child_exited(SIGKILL);  // a wait status: killed by signal 9
    EXPECT_FALSE(mb.usable());
    EXPECT_EQ(mb.poison_reason(), "CHILD_DIED: child killed by signal 9 (Killed) while idle");
}

// Each side learns whether its bump had to wake the other (the waits that
// follow cover that wake-up: spin_wait.h): a child asleep in wait_request is
// woken by the publish, a parent asleep on the doorbell by the finish; a side
// that is awake is not.
TEST(Mailbox, PublishAndFinishSayWhetherTheyWokeTheOtherSide) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    const auto blob = bytes_of("x");
    uint64_t seq = 0;
    std::thread child([&] {
        SpinWaiter never(never_spin_policy());
        ASSERT_EQ(mb.wait_request(never, after(30'000ms)), ChildWake::TASK);
        (void)mb.begin_task();
        // The parent is asleep on the doorbell by now (it announced itself below).
        const auto deadline = after(30'000ms);
        while (std::atomic_ref<uint32_t>(bell.word()->sleepers).load() == 0 && Clock::now() < deadline) {
            std::this_thread::sleep_for(100us);
        }
        mb.finish_ok();
        EXPECT_TRUE(mb.finish_woke_parent());
    });
    const auto deadline = after(30'000ms);
    while (std::atomic_ref<uint32_t>(mb.frame().request.sleepers).load() == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(100us);
    }
    ASSERT_EQ(mb.publish(1, CallConfig{}, blob, seq), PublishStatus::OK);
    EXPECT_TRUE(mb.publish_woke_child());
    SpinWaiter never(never_spin_policy());
    ASSERT_TRUE(wait_result(mb, bell, never, after(30'000ms)).has_value());
    child.join();

    // Nobody asleep: the child is not waiting, and the finish finds no sleeper.
    ASSERT_EQ(mb.publish(2, CallConfig{}, blob, seq), PublishStatus::OK);
    EXPECT_FALSE(mb.publish_woke_child());
    ASSERT_EQ(mb.frame().state, static_cast<uint32_t>(MailboxState::TASK_READY));
    (void)mb.begin_task();
    mb.finish_ok();
    EXPECT_FALSE(mb.finish_woke_parent());
    ASSERT_TRUE(mb.poll_result().has_value());
}
