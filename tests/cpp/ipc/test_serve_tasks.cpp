// serve_tasks: the handler's outcome reaches the parent, an exception becomes
// TASK_FAILED with its text, a corrupt blob length is refused before the
// handler runs, shutdown ends the loop with SERVE_SHUTDOWN, and a
// stop_after_task that answers true ends it with SERVE_STOPPED once the result is out.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/serve_tasks.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

struct Served {
    int calls = 0;
    int status = -1;
};

// Runs serve_tasks on a thread of this process (the mailbox works the same
// within one process) with a handler that throws for callable 9.
std::thread serve_on_thread(Mailbox& mb, Served& served) {
    return std::thread([&mb, &served] {
        served.status = serve_tasks(
            mb,
            [&served](const TaskView& t) -> TaskOutcome {
                ++served.calls;
                if (t.callable_id == 9) throw std::runtime_error("handler threw");
                return {};
            },
            SpinPolicy{}, 10'000ms);
    });
}

}  // namespace

TEST(ServeTasks, ExceptionBecomesTaskFailedWithItsText) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    Served served;
    std::thread child = serve_on_thread(mb, served);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(9, CallConfig{}, {}, seq), PublishStatus::OK);
    SpinWaiter waiter;
    auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::TASK_FAILED);
    EXPECT_EQ(r->message, "handler threw");
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->ok());
    mb.request_shutdown();
    child.join();
    EXPECT_EQ(served.status, SERVE_SHUTDOWN);
    EXPECT_EQ(served.calls, 2);
}

TEST(ServeTasks, CorruptBlobLengthIsRefusedBeforeTheHandler) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().blob_bytes = 65;  // one past the capacity
    Served served;
    std::thread child = serve_on_thread(mb, served);
    SpinWaiter waiter;
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::BAD_ARGUMENTS);
    mb.request_shutdown();
    child.join();
    EXPECT_EQ(served.calls, 0);
}

TEST(ServeTasks, IdleLimitEndsTheLoop) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    EXPECT_EQ(serve_tasks(mb, [](const TaskView&) { return TaskOutcome{}; }, SpinPolicy{}, 20ms), SERVE_IDLE_LIMIT);
}

TEST(ServeTasks, IdleDeadlineIsNoneWithoutALimitAndNowPlusTheLimitWithOne) {
    EXPECT_EQ(idle_deadline(std::chrono::nanoseconds::max()), NO_DEADLINE);
    EXPECT_EQ(idle_deadline(std::chrono::nanoseconds::max() - std::chrono::nanoseconds{1}), NO_DEADLINE);
    const Clock::time_point before = Clock::now();
    const Deadline d = idle_deadline(20ms);
    const Clock::time_point after = Clock::now();
    EXPECT_GE(d, before + 20ms);
    EXPECT_LE(d, after + 20ms);
}

TEST(ServeTasks, StopAfterTaskIsAskedOnceTheResultIsStored) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    int calls = 0, asked = 0;
    int status = -1;
    std::thread child([&] {
        status = serve_tasks(
            mb,
            [&](const TaskView&) -> TaskOutcome {
                ++calls;
                return {};
            },
            SpinPolicy{}, 10'000ms, [&] { return ++asked == 2; });
    });
    SpinWaiter waiter;
    uint64_t seq = 0;
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
        const auto r = wait_result(mb, bell, waiter, after(10'000ms));
        ASSERT_TRUE(r.has_value());
        EXPECT_TRUE(r->ok());  // the second result is stored before the loop stops
    }
    child.join();  // the second answer (true) ends it without a shutdown
    EXPECT_EQ(status, SERVE_STOPPED);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(asked, 2);
}

TEST(ServeTasks, StopAfterTaskIsAskedAfterARefusedBlobToo) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    mb.frame().blob_bytes = 65;
    int status = -1;
    std::thread child([&] {
        status =
            serve_tasks(mb, [](const TaskView&) { return TaskOutcome{}; }, SpinPolicy{}, 10'000ms, [] { return true; });
    });
    SpinWaiter waiter;
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, TaskError::BAD_ARGUMENTS);
    child.join();
    EXPECT_EQ(status, SERVE_STOPPED);
}
