// BelowStatus: a next-level Worker child's report, up to its parent, of the
// children lost below it.
#include <gtest/gtest.h>

#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "simpler/engine/below_status.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler {
namespace {

TEST(BelowStatus, AReportIsReadOnceEachTimeItChanges) {
    BelowStatus status;
    EXPECT_FALSE(status.read_if_changed(0).has_value());  // nothing lost yet
    status.publish(1, "chip 1: lost (CHILD_DIED)");
    const auto first = status.read_if_changed(0);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->lost, 1U);
    EXPECT_EQ(first->text, "chip 1: lost (CHILD_DIED)");
    EXPECT_FALSE(status.read_if_changed(first->version).has_value());
    status.publish(2, "chip 0: lost (TIMED_OUT); chip 1: lost (CHILD_DIED)");
    const auto second = status.read_if_changed(first->version);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->lost, 2U);
    EXPECT_NE(second->version, first->version);
}

TEST(BelowStatus, ALongReportIsCutToThePage) {
    BelowStatus status;
    status.publish(3, std::string(5000, 'x'));
    const auto r = status.read_if_changed(0);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->text.size(), BELOW_TEXT_BYTES - 1);
}

TEST(BelowStatus, AReadDuringWritesIsWholeOrNothing) {
    // A child publishing as fast as it can: every report the parent reads
    // is one the child wrote (its count matches its text), never a torn one.
    BelowStatus status;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        for (uint32_t i = 1; i <= 200000; ++i) status.publish(i, std::string(i % 700, 'a' + static_cast<char>(i % 26)));
        _exit(0);
    }
    uint32_t seen = 0;
    const auto check = [&] {
        const auto r = status.read_if_changed(seen);
        if (!r) return;
        seen = r->version;
        ASSERT_EQ(r->text.size(), r->lost % 700);
        if (!r->text.empty()) {
            ASSERT_EQ(r->text, std::string(r->text.size(), 'a' + static_cast<char>(r->lost % 26)));
        }
    };
    int ws = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &ws, WNOHANG)) == 0) check();
    ASSERT_EQ(done, pid);
    const auto last = status.read_if_changed(0);  // the writer is gone: its last report is whole
    ASSERT_TRUE(last.has_value());
    EXPECT_EQ(last->lost, 200000U);
}

TEST(BelowStatus, OnlyTheProcessThatWasToldReportsUp) {
    BelowStatus status;
    ipc::Doorbell bell;
    EXPECT_FALSE(report_up(1, "nobody listens"));  // this process reports to no parent
    const uint32_t rung = bell.sequence();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child: set up as a next-level Worker child is before it serves.
        set_reporting_up(&status, &bell);
        const bool reported = report_up(1, "chip 1: lost (CHILD_DIED: killed by signal 9)");
        const pid_t grandchild = fork();  // a process the child forks does not report
        if (grandchild == 0) _exit(report_up(2, "not this one") ? 1 : 0);
        int gs = 0;
        waitpid(grandchild, &gs, 0);
        _exit(reported && WIFEXITED(gs) && WEXITSTATUS(gs) == 0 ? 0 : 1);
    }
    ipc::SpinWaiter waiter;
    EXPECT_TRUE(bell.wait_past(rung, waiter, ipc::Clock::now() + std::chrono::seconds(30)).has_value());
    int ws = 0;
    ASSERT_EQ(waitpid(pid, &ws, 0), pid);
    ASSERT_TRUE(WIFEXITED(ws));
    EXPECT_EQ(WEXITSTATUS(ws), 0);
    const auto r = status.read_if_changed(0);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->lost, 1U);
    EXPECT_EQ(r->text, "chip 1: lost (CHILD_DIED: killed by signal 9)");
}

}  // namespace
}  // namespace simpler
