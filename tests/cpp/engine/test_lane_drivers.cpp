// LaneDrivers alone (internal/lane_drivers.h), no process: a Turn stands the scheduler thread
// down while it lives, the first Turn gets the shared adaptive waiter and a second one its own,
// a parked scheduler thread wakes on unpark(), and a publish's woken child is seen once.
#include "simpler/engine/internal/lane_drivers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace simpler {
namespace {

TEST(LaneDriversTest, ATurnStandsTheSchedulerDownWhileItLives) {
    LaneDrivers drivers(ipc::SpinPolicy{});
    EXPECT_FALSE(drivers.turn_held());
    {
        LaneDrivers::Turn first(drivers);
        EXPECT_TRUE(drivers.turn_held());
        {
            LaneDrivers::Turn second(drivers);
            EXPECT_TRUE(drivers.turn_held());
        }
        EXPECT_TRUE(drivers.turn_held()) << "one Turn still drives";
    }
    EXPECT_FALSE(drivers.turn_held());
}

TEST(LaneDriversTest, TheFirstTurnWaitsWithTheSharedWaiterAndAConcurrentOneWithItsOwn) {
    LaneDrivers drivers(ipc::SpinPolicy{});
    ipc::SpinWaiter* shared = nullptr;
    {
        LaneDrivers::Turn first(drivers);
        shared = &first.waiter();
        LaneDrivers::Turn second(drivers);
        EXPECT_NE(&second.waiter(), shared);
    }
    // Let go: the next Turn has the shared one again (it keeps what it learnt across waits).
    LaneDrivers::Turn again(drivers);
    EXPECT_EQ(&again.waiter(), shared);
}

TEST(LaneDriversTest, AParkedSchedulerWakesOnUnparkAndParksLongerWhileTheWaitGoesOn) {
    LaneDrivers drivers(ipc::SpinPolicy{});
    ipc::SpinWaiter waiter(ipc::never_spin_policy());
    EXPECT_EQ(drivers.park(drivers.park_word(), waiter, LaneDrivers::PARK_MIN), 2 * LaneDrivers::PARK_MIN);
    EXPECT_EQ(drivers.park(drivers.park_word(), waiter, LaneDrivers::PARK_MAX), LaneDrivers::PARK_MAX);

    // Parked for an hour, it returns once unparked (a hang fails the test by its timeout).
    const uint32_t seen = drivers.park_word();
    std::atomic<bool> woke{false};
    std::thread scheduler([&] {
        (void)drivers.park(seen, waiter, std::chrono::hours(1));
        woke = true;
    });
    drivers.unpark();
    scheduler.join();
    EXPECT_TRUE(woke);
    EXPECT_NE(drivers.park_word(), seen);
}

TEST(LaneDriversTest, AWokenChildIsSeenByTheNextWaitOnly) {
    LaneDrivers drivers(ipc::SpinPolicy{});
    EXPECT_FALSE(drivers.take_woke_child());
    drivers.note_woke_child(false);
    EXPECT_FALSE(drivers.take_woke_child());
    drivers.note_woke_child(true);
    drivers.note_woke_child(false);  // a later publish that woke none does not hide it
    EXPECT_TRUE(drivers.take_woke_child());
    EXPECT_FALSE(drivers.take_woke_child());
}

}  // namespace
}  // namespace simpler
