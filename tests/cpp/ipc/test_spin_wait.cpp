// SpinWaiter: policy validation, the adaptive budget moving in the documented
// direction, and no wait that outlives its deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

// Returns once a waiter announced itself asleep on w (bounded by 10 s).
void wait_for_sleeper(SharedWord& w) {
    const auto deadline = after(10'000ms);
    while (std::atomic_ref<uint32_t>(w.sleepers).load() == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(100us);
    }
}

}  // namespace

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
        wait_for_sleeper(*w);
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
        wait_for_sleeper(*w);
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

TEST(SpinWaiter, ACollapsedBudgetIsProbedEveryProbeEveryWaits) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter waiter(SpinPolicy{40us, 1us, 50us, true});
    // The first wait leaves the budget at 20 us (below initial_spin); the next
    // PROBE_EVERY - 1 waits count toward a probe, the one after is the probe.
    for (uint32_t i = 0; i < PROBE_EVERY; ++i) EXPECT_EQ(waiter.wait_change(*w, 0, after(2ms)), std::nullopt);
    EXPECT_EQ(waiter.stats().probes, 0u);
    EXPECT_EQ(waiter.wait_change(*w, 0, after(2ms)), std::nullopt);
    EXPECT_EQ(waiter.stats().probes, 1u);
    EXPECT_LT(waiter.budget(), 40us);  // a probe that caught nothing restores nothing
    // A word already changed returns at once and counts toward nothing.
    bump(*w);
    EXPECT_EQ(waiter.wait_change(*w, 0, after(2ms)), std::optional<uint32_t>(1));
    EXPECT_EQ(waiter.stats().probes, 1u);
    // A fixed policy never probes.
    SpinWaiter fixed(fixed_spin_policy(1us));
    for (uint32_t i = 0; i <= PROBE_EVERY; ++i) EXPECT_EQ(fixed.wait_change(*w, 1, after(1ms)), std::nullopt);
    EXPECT_EQ(fixed.stats().probes, 0u);
}

TEST(SpinWaiter, AProbeThatCatchesTheChangeRestoresTheBudget) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    // Long budgets, so the test does not depend on fine timing: the probe spins
    // 400 ms, the collapsed budget 200 ms, and the change comes at ~250 ms.
    SpinWaiter waiter(SpinPolicy{400ms, 0us, 800ms, true});
    EXPECT_EQ(waiter.wait_change(*w, 0, after(850ms)), std::nullopt);  // longer than max_spin: halved
    EXPECT_EQ(waiter.budget(), 200ms);
    for (uint32_t i = 0; i + 1 < PROBE_EVERY; ++i) EXPECT_EQ(waiter.wait_change(*w, 0, after(1ms)), std::nullopt);
    const uint64_t sleeps = waiter.stats().sleeps;
    std::atomic<bool> waiting{false};
    std::thread publisher([&] {
        while (!waiting.load()) std::this_thread::sleep_for(100us);
        std::this_thread::sleep_for(250ms);
        bump(*w);
    });
    waiting.store(true);
    EXPECT_EQ(waiter.wait_change(*w, 0, after(10'000ms)), std::optional<uint32_t>(1));
    publisher.join();
    EXPECT_EQ(waiter.stats().probes, 1u);
    EXPECT_EQ(waiter.stats().sleeps, sleeps);  // caught while spinning: the collapsed budget would have slept
    EXPECT_GE(waiter.budget(), 400ms);
}

// bump says whether the bump had a sleeper to wake: that is what tells a
// waiter its peer answers only after a wake-up.
TEST(SharedWord, BumpSaysWhetherASleeperWasWoken) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    EXPECT_FALSE(bump(*w));  // nobody asleep
    std::thread sleeper([&] { (void)sleep_while_equal(*w, 1, after(30'000ms)); });
    wait_for_sleeper(*w);
    EXPECT_TRUE(bump(*w));
    sleeper.join();
    EXPECT_EQ(load_acquire(*w), 2u);
}

// A covered wait (its peer was being woken) that ends asleep measured the
// wake-up, not the peer: the budget stays where it was, where an uncovered one
// of the same length halves it.
TEST(SpinWaiter, ACoveredWaitThatSleepsLeavesTheBudgetAlone) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    SpinWaiter covered(SpinPolicy{20us, 1us, 40us, true});
    EXPECT_EQ(covered.wait_change(*w, 0, after(150ms), true), std::nullopt);
    EXPECT_EQ(covered.budget(), 20us);
    EXPECT_EQ(covered.stats().covers, 1u);
    SpinWaiter uncovered(SpinPolicy{20us, 1us, 40us, true});
    EXPECT_EQ(uncovered.wait_change(*w, 0, after(150ms)), std::nullopt);
    EXPECT_EQ(uncovered.budget(), 10us);
    EXPECT_EQ(uncovered.stats().covers, 0u);
    // A waiter that never spins is not made to spin by a cover.
    SpinWaiter never(never_spin_policy());
    EXPECT_EQ(never.wait_change(*w, 0, after(20ms), true), std::nullopt);
    EXPECT_EQ(never.stats().covers, 0u);
    EXPECT_EQ(never.stats().spin_hits, 0u);
}

// A covered wait spins past the budget: with a 1 us budget, a change another
// thread makes 20 us into the wait is caught spinning (an uncovered wait
// sleeps after 1 us). A writer delayed past WAKE_UP_COVER on a loaded machine
// makes one try sleep, so the test makes up to twenty and needs one caught
// spinning. A waiter delayed 20 us on its way in finds the change already made
// and returns at its first look, before any cover (covers stays 0): such a try
// says nothing and is not counted. Uncovered, five tries sleep (all but one
// that found the change already made).
TEST(SpinWaiter, ACoveredWaitSpinsPastItsBudget) {
    SharedRegion region(64);
    auto* w = new (region.data()) SharedWord{0, 0};
    enum class Try { CAUGHT_SPINNING, SLEPT, CHANGED_BEFORE_THE_WAIT };
    auto one_try = [&](bool cover) {
        SpinWaiter waiter(fixed_spin_policy(1us));
        std::atomic<bool> ready{false};
        std::atomic<bool> waiting{false};
        const uint32_t seen = load_acquire(*w);
        std::thread writer([&] {
            ready.store(true);
            while (!waiting.load()) cpu_pause();
            const auto at = Clock::now() + 20us;
            while (Clock::now() < at) cpu_pause();
            bump(*w);
        });
        while (!ready.load()) std::this_thread::yield();
        waiting.store(true);
        EXPECT_EQ(waiter.wait_change(*w, seen, after(30'000ms), cover), seen + 1);
        writer.join();
        EXPECT_LE(waiter.stats().covers, cover ? 1u : 0u);
        if (cover && waiter.stats().covers == 0) return Try::CHANGED_BEFORE_THE_WAIT;
        return waiter.stats().sleeps == 0 ? Try::CAUGHT_SPINNING : Try::SLEPT;
    };
    int caught = 0;
    for (int i = 0; i < 20 && caught == 0; ++i) caught += one_try(true) == Try::CAUGHT_SPINNING ? 1 : 0;
    EXPECT_EQ(caught, 1);
    int caught_uncovered = 0;
    for (int i = 0; i < 5; ++i) caught_uncovered += one_try(false) == Try::CAUGHT_SPINNING ? 1 : 0;
    EXPECT_LT(caught_uncovered, 5);
}
