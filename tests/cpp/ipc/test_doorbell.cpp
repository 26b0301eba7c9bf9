// Doorbell: sequence semantics (a ring before the wait is not lost), and no
// lost wake-up under stress: several children answering through one doorbell
// while the parent sleeps on it, with the futex path forced.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <memory>
#include <vector>

#include "ipc_fixtures.h"
#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(Doorbell, RingBeforeTheWaitIsNotLost) {
    Doorbell bell;
    const uint32_t seen = bell.sequence();
    bell.ring();
    SpinWaiter waiter(never_spin_policy());
    EXPECT_EQ(bell.wait_past(seen, waiter, after(1000ms)), std::optional<uint32_t>(seen + 1));
}

TEST(Doorbell, WaitWithoutARingTimesOut) {
    Doorbell bell;
    SpinWaiter waiter(never_spin_policy());
    EXPECT_EQ(bell.wait_past(bell.sequence(), waiter, after(20ms)), std::nullopt);
}

TEST(Doorbell, RingFromAnotherProcessWakesTheSleeper) {
    Doorbell bell;
    const uint32_t seen = bell.sequence();
    ChildProcess child = ChildProcess::spawn([&bell] {
        std::this_thread::sleep_for(10ms);
        bell.ring();
        return 0;
    });
    SpinWaiter waiter(never_spin_policy());
    EXPECT_TRUE(bell.wait_past(seen, waiter, after(10'000ms)).has_value());
    EXPECT_TRUE(child.wait_exit(after(10'000ms)).has_value());
}

namespace {

// Four lanes, `tasks` each, one parent loop sleeping on the doorbell. A
// doorbell wait that times out while a result is waiting in a lane is a lost
// wake-up and fails the test; the whole run is bounded.
void stress(SpinPolicy child_policy, SpinPolicy parent_policy, int tasks) {
    constexpr int LANES = 4;
    Doorbell bell;
    std::vector<std::unique_ptr<Mailbox>> lanes;
    for (int i = 0; i < LANES; ++i) lanes.push_back(std::make_unique<Mailbox>(MailboxConfig{256}, bell));
    std::vector<ChildProcess> children;
    for (int i = 0; i < LANES; ++i) {
        Mailbox* mb = lanes[i].get();
        children.push_back(ChildProcess::spawn([mb, child_policy] { return serve_echo(*mb, child_policy); }));
    }
    std::vector<int> done(LANES, 0);
    uint64_t seq = 0;
    for (auto& mb : lanes) ASSERT_EQ(mb->publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
    SpinWaiter waiter(parent_policy);
    const auto overall = after(60'000ms);
    int finished = 0;
    while (finished < LANES) {
        ASSERT_LT(Clock::now(), overall) << "stress did not finish in 60 s";
        const uint32_t seen = bell.sequence();
        bool progressed = false;
        for (int i = 0; i < LANES; ++i) {
            if (auto r = lanes[i]->poll_result()) {
                ASSERT_TRUE(r->ok()) << r->message;
                progressed = true;
                if (++done[i] < tasks) {
                    ASSERT_EQ(lanes[i]->publish(1, CallConfig{}, {}, seq), PublishStatus::OK);
                } else {
                    ++finished;
                }
            }
        }
        if (progressed) continue;
        if (!bell.wait_past(seen, waiter, after(5000ms))) {
            for (auto& mb : lanes) {
                ASSERT_EQ(mb->poll_result(), std::nullopt) << "lost wake-up: a result waited 5 s unseen";
            }
            FAIL() << "no child answered for 5 s";
        }
    }
    for (auto& mb : lanes) mb->request_shutdown();
    for (auto& c : children) {
        const auto st = c.wait_exit(after(10'000ms));
        ASSERT_TRUE(st.has_value());
        EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << describe_wait_status(*st);
    }
}

}  // namespace

TEST(Doorbell, NoLostWakeupsWhenEveryWaitSleeps) { stress(never_spin_policy(), never_spin_policy(), 3000); }

TEST(Doorbell, NoLostWakeupsWithShortSpins) {
    stress(fixed_spin_policy(std::chrono::nanoseconds(500)), fixed_spin_policy(std::chrono::nanoseconds(500)), 3000);
}

TEST(Doorbell, NoLostWakeupsWithAdaptiveSpins) { stress(SpinPolicy{}, SpinPolicy{}, 3000); }
