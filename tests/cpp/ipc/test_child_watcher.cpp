// Liveness end to end: a child SIGKILLed in the middle of a task becomes a
// CHILD_DIED result on the sleeping parent (before a generous hang guard), and its lane stays
// unusable; exits are reported once each, without reaping.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/child_watcher.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(ChildWatcher, ChildKilledMidTaskBecomesAnErrorNotAHang) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{4096}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    // The wiring an engine does: the reaper marks the lane and rings.
    ChildWatcher watcher({{child.pid(), child.pidfd()}}, [&mb, &bell](size_t, int status) {
        mb.mark_child_exited(status);
        bell.ring();
    });
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(3, CallConfig{}, {}, seq), PublishStatus::OK);  // hangs in the child
    // Wait until the child has the task, then kill it.
    const auto started = after(10'000ms);
    while (std::atomic_ref<uint32_t>(mb.frame().state).load() != static_cast<uint32_t>(MailboxState::RUNNING) &&
           Clock::now() < started) {
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(mb.frame().state, static_cast<uint32_t>(MailboxState::RUNNING));
    ASSERT_TRUE(child.signal(SIGKILL));
    SpinWaiter waiter(never_spin_policy());
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));  // no task deadline: only death ends it
    ASSERT_TRUE(r.has_value()) << "parent still waiting 10 s after the child was killed";
    EXPECT_EQ(r->error, TaskError::CHILD_DIED);
    EXPECT_NE(r->message.find("killed by signal 9"), std::string::npos) << r->message;
    EXPECT_FALSE(mb.usable());
    EXPECT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::LANE_DEAD);
    watcher.stop();
    // The watcher did not reap: the owner still does, exactly once.
    const auto st = child.wait_exit(after(10'000ms));
    ASSERT_TRUE(st.has_value());
    EXPECT_TRUE(WIFSIGNALED(*st));
}

TEST(ChildWatcher, ResultStoredBeforeDeathIsStillDelivered) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] {
        SpinWaiter waiter;
        if (mb.wait_request(waiter, after(10'000ms)) != ChildWake::TASK) return 1;
        (void)mb.begin_task();
        mb.finish_ok();
        return 0;  // exits right after answering
    });
    ChildWatcher watcher({{child.pid(), child.pidfd()}}, [&mb, &bell](size_t, int status) {
        mb.mark_child_exited(status);
        bell.ring();
    });
    uint64_t seq = 0;
    ASSERT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    ASSERT_TRUE(child.wait_exit(after(10'000ms)).has_value() || true);
    // Whether or not the exit was seen first, the stored result wins.
    SpinWaiter waiter;
    const auto r = wait_result(mb, bell, waiter, after(10'000ms));
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->ok()) << r->message;
    watcher.stop();
}

TEST(ChildWatcher, ReportsEachExitOnceWithItsStatus) {
    std::vector<ChildProcess> children;
    children.push_back(ChildProcess::spawn([] { return 5; }));
    children.push_back(ChildProcess::spawn([] {
        for (;;) ::pause();
        return 0;
    }));
    std::mutex m;
    std::vector<std::pair<size_t, int>> seen;
    std::atomic<int> count{0};
    ChildWatcher watcher({{children[0].pid(), children[0].pidfd()}, {children[1].pid(), children[1].pidfd()}},
                         [&](size_t i, int status) {
                             std::lock_guard<std::mutex> lock(m);
                             seen.emplace_back(i, status);
                             ++count;
                         });
    children[1].signal(SIGKILL);
    const auto deadline = after(10'000ms);
    while (count.load() < 2 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);  // a duplicate report would land here
    watcher.stop();
    std::lock_guard<std::mutex> lock(m);
    ASSERT_EQ(seen.size(), 2u);
    for (const auto& [i, status] : seen) {
        if (i == 0) {
            EXPECT_TRUE(WIFEXITED(status));
            EXPECT_EQ(WEXITSTATUS(status), 5);
        } else {
            EXPECT_EQ(i, 1u);
            EXPECT_TRUE(WIFSIGNALED(status));
            EXPECT_EQ(WTERMSIG(status), SIGKILL);
        }
    }
    for (ChildProcess& c : children) EXPECT_TRUE(c.wait_exit(after(10'000ms)).has_value());
}

TEST(ChildWatcher, StopsWithNoExits) {
    ChildProcess child = ChildProcess::spawn([] {
        for (;;) ::pause();
        return 0;
    });
    {
        // The destructor stops the watcher thread though no child exits
        // (a hang here is caught by the test's own timeout).
        ChildWatcher watcher({{child.pid(), child.pidfd()}}, [](size_t, int) {});
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_TRUE(child.signal(SIGKILL));  // the child outlived its watcher; the owner still ends it
    EXPECT_TRUE(child.wait_exit(after(10'000ms)).has_value());
}

TEST(ChildWatcher, ChildDeathWhileIdleRefusesTheNextPublish) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{64}, bell);
    ChildProcess child = ChildProcess::spawn([&mb] { return serve_echo(mb); });
    ChildWatcher watcher({{child.pid(), child.pidfd()}}, [&mb, &bell](size_t, int status) {
        mb.mark_child_exited(status);
        bell.ring();
    });
    const uint32_t seen = bell.sequence();
    ASSERT_TRUE(child.signal(SIGKILL));
    SpinWaiter waiter(never_spin_policy());
    ASSERT_TRUE(bell.wait_past(seen, waiter, after(10'000ms)).has_value()) << "the death never rang the doorbell";
    EXPECT_FALSE(mb.usable());
    EXPECT_EQ(mb.poll_result(), std::nullopt);  // nothing was in flight
    uint64_t seq = 0;
    EXPECT_EQ(mb.publish(1, CallConfig{}, {}, seq), PublishStatus::LANE_DEAD);
    watcher.stop();
    EXPECT_TRUE(child.wait_exit(after(10'000ms)).has_value());
}
