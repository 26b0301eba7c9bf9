// SpinWaiter: policy validation, the adaptive budget moving in the documented
// direction, and no wait that outlives its deadline.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"

using namespace simpler::ipc;
using namespace ipc_test;

TEST(SpinPolicy, RejectsBoundsOutOfOrder) {
    EXPECT_THROW(SpinWaiter(SpinPolicy{10us, 20us, 30us, true}), std::invalid_argument);
    EXPECT_THROW(SpinWaiter(SpinPolicy{40us, 0us, 30us, true}), std::invalid_argument);
    EXPECT_THROW(SpinWaiter(SpinPolicy{0us, -1us, 30us, true}), std::invalid_argument);
    EXPECT_THROW(SpinWaiter(SpinPolicy{0us, 0us, 30us, true, -1us}), std::invalid_argument);
    EXPECT_NO_THROW(SpinWaiter{never_spin_policy()});
    EXPECT_NO_THROW(SpinWaiter{fixed_spin_policy(5us)});
}

TEST(SpinWaiter, ChangedWordReturnsWithoutWaiting) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{7, 0};
    SpinWaiter waiter;
    EXPECT_EQ(waiter.wait_change(*w, 6, after(1000ms)), std::optional<uint32_t>(7));
    EXPECT_EQ(waiter.stats().sleeps, 0u);
}

TEST(SpinWaiter, TimesOutAndLeavesNoSleeperBehind) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(fixed_spin_policy(10us));
    const auto start = Clock::now();
    EXPECT_EQ(waiter.wait_change(*w, 0, start + 30ms), std::nullopt);
    EXPECT_GE(Clock::now() - start, 30ms);
    EXPECT_EQ(w->sleepers, 0u);
    EXPECT_EQ(waiter.stats().timeouts, 1u);
    EXPECT_EQ(waiter.stats().sleeps, 1u);
}

TEST(SpinWaiter, NeverSpinPolicyGoesStraightToSleep) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(never_spin_policy());
    std::thread publisher([w] {
        std::this_thread::sleep_for(5ms);
        bump(*w);
    });
    EXPECT_EQ(waiter.wait_change(*w, 0, after(10'000ms)), std::optional<uint32_t>(1));
    publisher.join();
    EXPECT_EQ(waiter.stats().sleeps, 1u);
    EXPECT_EQ(waiter.stats().spin_hits, 0u);
    EXPECT_EQ(waiter.budget(), 0ns);
}

TEST(SpinWaiter, AdaptiveBudgetShrinksWhenWaitsOutlastTheMaximum) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(SpinPolicy{40us, 1us, 50us, true});
    for (int i = 0; i < 4; ++i) EXPECT_EQ(waiter.wait_change(*w, 0, after(2ms)), std::nullopt);
    EXPECT_EQ(waiter.budget(), 2500ns);  // 40 -> 20 -> 10 -> 5 -> 2.5 us
}

TEST(SpinWaiter, AdaptiveBudgetGrowsWhenASleepEndedWithinTheMaximum) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(SpinPolicy{0us, 0us, 5'000'000us, true});
    std::thread publisher([w] {
        std::this_thread::sleep_for(2ms);
        bump(*w);
    });
    EXPECT_TRUE(waiter.wait_change(*w, 0, after(10'000ms)).has_value());
    publisher.join();
    EXPECT_EQ(waiter.stats().sleeps, 1u);
    EXPECT_GE(waiter.budget(), 4ms);  // twice the ~2 ms the wait took
}

TEST(SpinWaiter, FixedPolicyNeverAdapts) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(fixed_spin_policy(3us));
    EXPECT_EQ(waiter.wait_change(*w, 0, after(1ms)), std::nullopt);
    EXPECT_EQ(waiter.budget(), 3us);
}
