// Idle cost: a parent thread asleep on the doorbell, a watcher thread and four
// children asleep in their mailboxes use (almost) no CPU, measured from /proc
// over ~2 s; and the /proc meter itself sees a busy child.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/child_watcher.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/process_cpu.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(ProcessCpu, TreeIncludesChildrenAndSeesABusyOne) {
    ChildProcess busy = ChildProcess::spawn([] {
        const auto end = after(5000ms);
        volatile uint64_t x = 0;
        while (Clock::now() < end) x = x + 1;
        return 0;
    });
    const std::vector<pid_t> tree = process_tree(getpid());
    EXPECT_NE(std::find(tree.begin(), tree.end(), busy.pid()), tree.end());
    const TreeCpuUsage u = measure_tree_cpu(getpid(), 1000ms);
    EXPECT_GE(u.processes, 2u);
    // A spinning child shows up: at least 2 ticks, even on a machine with a
    // load average of 20 (where it still gets ~10% of a core).
    EXPECT_GE(u.cpu_seconds, 0.02);
    busy.signal(SIGKILL);
    EXPECT_TRUE(busy.wait_exit(after(10'000ms)).has_value());
}

TEST(ProcessCpu, GoneProcessHasNoTicks) { EXPECT_EQ(process_cpu_ticks(-5), std::nullopt); }

TEST(IdleCpu, SleepingParentAndFourIdleChildrenUseUnderTwoPercentOfACore) {
    constexpr int CHILDREN = 4;
    Doorbell bell;
    std::vector<std::unique_ptr<Mailbox>> lanes;
    for (int i = 0; i < CHILDREN; ++i) lanes.push_back(std::make_unique<Mailbox>(MailboxConfig{4096}, bell));
    std::vector<ChildProcess> children;
    for (int i = 0; i < CHILDREN; ++i) {
        Mailbox* mb = lanes[i].get();
        children.push_back(ChildProcess::spawn([mb] { return serve_echo(*mb, SpinPolicy{}, 60'000ms); }));
    }
    // Some traffic first, so adaptive budgets are warm when the lanes go idle.
    SpinWaiter waiter;
    for (int round = 0; round < 200; ++round) {
        for (auto& mb : lanes) {
            uint64_t seq = 0;
            ASSERT_EQ(mb->publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
            const auto r = wait_result(*mb, bell, waiter, after(10'000ms));
            ASSERT_TRUE(r && r->ok());
        }
    }
    std::vector<WatchedChild> watched;
    for (auto& c : children) watched.push_back({c.pid(), c.pidfd()});
    ChildWatcher watcher(watched, [](size_t, int) {});
    std::atomic<bool> stop{false};
    std::thread scheduler([&] {  // the engine's scheduler thread, idle
        SpinWaiter idle_waiter;
        while (!stop.load()) {
            const uint32_t seen = bell.sequence();
            if (stop.load()) break;
            bell.wait_past(seen, idle_waiter, after(30'000ms));
        }
    });
    std::this_thread::sleep_for(50ms);
    const TreeCpuUsage u = measure_tree_cpu(getpid(), 2000ms);
    stop.store(true);
    bell.ring();
    scheduler.join();
    watcher.stop();
    EXPECT_EQ(u.processes, static_cast<size_t>(CHILDREN + 1));
    EXPECT_LT(u.core_fraction(), 0.02) << u.cpu_seconds << " s of CPU in " << u.wall_seconds << " s";
    RecordProperty("idle_cpu_core_fraction", std::to_string(u.core_fraction()));
    for (auto& mb : lanes) mb->request_shutdown();
    for (auto& c : children) {
        const auto st = c.wait_exit(after(10'000ms));
        ASSERT_TRUE(st.has_value());
        EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << describe_wait_status(*st);
    }
}
