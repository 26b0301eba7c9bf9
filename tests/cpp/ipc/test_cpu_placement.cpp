// Stepping off a shared CPU: step_off_current_cpu() leaves the caller's mask
// exactly as it was and moves only within it, and a SharedCore::STEP_ASIDE
// waiter whose peer runs on its CPU sees it and asks to move.
//
// The tests pin threads to one CPU to force the shared case (nothing else
// produces it on demand); whether the kernel then has room for a move depends
// on the machine's load, so a move is checked where it happened and the mask
// and the waits' count in every case.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <new>
#include <thread>

#include "ipc_fixtures.h"
#include "simpler/ipc/cpu_placement.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"

using namespace simpler::ipc;
using namespace ipc_test;

namespace {

cpu_set_t current_mask() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    EXPECT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    return mask;
}

cpu_set_t only(int cpu) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(cpu, &mask);
    return mask;
}

int first_cpu(const cpu_set_t& mask) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &mask)) return c;
    }
    return -1;
}

void set_mask(const cpu_set_t& mask) { ASSERT_EQ(sched_setaffinity(0, sizeof mask, &mask), 0); }

// Two words a pair of threads hands a counter back and forth through.
struct WordPair {
    SharedRegion region{2 * sizeof(SharedWord)};
    SharedWord* ping = new (region.data()) SharedWord{0, 0};
    SharedWord* pong = new (static_cast<std::byte*>(region.data()) + sizeof(SharedWord)) SharedWord{0, 0};
};

bool mask_is(const cpu_set_t& expected) {
    const cpu_set_t mask = current_mask();
    return CPU_EQUAL(&mask, &expected);
}

// The tests that pin threads to one CPU of the test's mask (its first) and
// free them again: skipped when the mask allows one CPU only. `ping`/`pong`
// are the two words a pair of threads hands a counter back and forth through;
// `policy` never sleeps (a sleep ends a streak) and yields after 2 us as the
// default does.
class CpuPlacementOnTwoCpus : public ::testing::Test {
protected:
    void SetUp() override {
        if (CPU_COUNT(&full) < 2) GTEST_SKIP() << "one CPU allowed: nowhere to step, no CPU to share";
    }

    const cpu_set_t full = current_mask();
    const int cpu = first_cpu(full);
    WordPair words;
    SharedWord* ping = words.ping;
    SharedWord* pong = words.pong;
    const SpinPolicy policy = fixed_spin_policy(std::chrono::seconds(30));
};

}  // namespace

TEST(CpuPlacement, RunnableTasksCountsAtLeastTheCaller) {
    const std::optional<uint32_t> runnable = runnable_tasks();
    ASSERT_TRUE(runnable.has_value());
    EXPECT_GE(*runnable, 1u);
}

TEST_F(CpuPlacementOnTwoCpus, APinnedThreadStaysAndAFreeOneMovesWithinItsMaskWhichStaysAsItWas) {
    // On a thread of its own: the test's main thread keeps its mask.
    std::thread([&] {
        set_mask(only(cpu));
        EXPECT_EQ(step_off_current_cpu(), StepAside::PINNED);
        EXPECT_EQ(sched_getcpu(), cpu);
        EXPECT_TRUE(mask_is(only(cpu)));

        set_mask(full);
        const int before = sched_getcpu();
        const StepAside outcome = step_off_current_cpu();
        const int after = sched_getcpu();
        EXPECT_TRUE(mask_is(full));
        EXPECT_TRUE(CPU_ISSET(after, &full));
        if (outcome == StepAside::MOVED) {
            EXPECT_NE(after, before);
        } else {
            EXPECT_EQ(outcome, StepAside::NO_ROOM);  // a loaded machine; nothing else refuses this mask
        }
    }).join();
}

// Two threads hand a counter back and forth by spinning, both pinned to one
// CPU: each can move only while the other is off the CPU, so the waits end
// right after a yield that ran the peer, and the STEP_ASIDE side asks to move
// (refused: its mask is one CPU). Freed, the pair keeps going, and a move, if
// the machine had room for one, put the waiter on another CPU of its mask.
TEST_F(CpuPlacementOnTwoCpus, AWaiterThatSharesItsCpuWithItsPeerAsksToStepAside) {
    constexpr uint32_t ROUNDS = 2'000;
    std::atomic<bool> freed{false};  // the stepper's phase 1 is done: the peer frees its mask too

    std::thread peer([&] {
        set_mask(only(cpu));
        SpinWaiter waiter(policy);
        for (uint32_t i = 1; i <= 2 * ROUNDS; ++i) {
            if (i == ROUNDS + 1) {
                while (!freed.load()) std::this_thread::yield();
                set_mask(full);
            }
            ASSERT_EQ(waiter.wait_change(*ping, i - 1, after(30'000ms)), i);
            bump(*pong);
        }
    });
    SpinStats pinned{};
    SpinStats freed_stats{};
    std::thread stepper([&] {
        set_mask(only(cpu));
        SpinWaiter waiter(policy, SharedCore::STEP_ASIDE);
        for (uint32_t i = 1; i <= 2 * ROUNDS; ++i) {
            if (i == ROUNDS + 1) {
                pinned = waiter.stats();
                set_mask(full);
                freed.store(true);
            }
            bump(*ping);
            ASSERT_EQ(waiter.wait_change(*pong, i - 1, after(30'000ms)), i);
        }
        freed_stats = waiter.stats();
        EXPECT_TRUE(mask_is(full));
        if (freed_stats.step_asides > 0) {
            EXPECT_TRUE(CPU_ISSET(sched_getcpu(), &full));
        }
    });
    peer.join();
    stepper.join();

    EXPECT_EQ(pinned.sleeps, 0u);
    EXPECT_GE(pinned.shared_core_waits, STEP_ASIDE_STREAK);
    EXPECT_GE(pinned.step_aside_tries, 1u);
    EXPECT_EQ(pinned.step_asides, 0u);  // pinned: nowhere to go
    EXPECT_EQ(freed_stats.waits, 2 * ROUNDS);
}

TEST_F(CpuPlacementOnTwoCpus, AStayingWaiterCountsSharedWaitsButNeverTriesToMove) {
    constexpr uint32_t ROUNDS = 500;
    std::thread peer([&] {
        set_mask(only(cpu));
        SpinWaiter waiter(policy);
        for (uint32_t i = 1; i <= ROUNDS; ++i) {
            ASSERT_EQ(waiter.wait_change(*ping, i - 1, after(30'000ms)), i);
            bump(*pong);
        }
    });
    SpinStats stats{};
    std::thread stayer([&] {
        set_mask(only(cpu));
        SpinWaiter waiter(policy);  // SharedCore::STAY
        for (uint32_t i = 1; i <= ROUNDS; ++i) {
            bump(*ping);
            ASSERT_EQ(waiter.wait_change(*pong, i - 1, after(30'000ms)), i);
        }
        stats = waiter.stats();
    });
    peer.join();
    stayer.join();
    EXPECT_GE(stats.shared_core_waits, 1u);
    EXPECT_EQ(stats.step_aside_tries, 0u);
}
