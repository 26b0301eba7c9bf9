// Worker::child_states: what a Worker says of each child as values — lost or
// usable, and why — with child_status() the same as lines.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "simpler/engine/worker.h"

namespace simpler {
namespace {

using namespace std::chrono_literals;

TEST(WorkerStatus, AChildLostIsAValueWithWhyAndItsLineIsTheStatusLine) {
    WorkerConfig c;
    c.num_chips = 2;
    c.chip_lane.chip.arena_bytes = 1 << 22;
    c.chip_lane.chip.orchestrations = {"std.copy"};
    c.close_grace = 500ms;
    Worker w(c);
    w.init();
    ASSERT_EQ(kill(w.child_pids()[1], SIGKILL), 0);
    std::vector<ChildStatus> states;
    const auto deadline = std::chrono::steady_clock::now() + 20s;  // a hang bound, not a timing
    do {
        std::this_thread::sleep_for(5ms);
        states = w.child_states();
    } while (!states.at(1).lost && std::chrono::steady_clock::now() < deadline);
    ASSERT_EQ(states.size(), 2U);
    EXPECT_EQ(states[0].child.name(), "chip 0");
    EXPECT_FALSE(states[0].lost);
    EXPECT_EQ(states[0].line(), "chip 0: usable");
    ASSERT_TRUE(states[1].lost);
    EXPECT_NE(states[1].why.find("signal 9"), std::string::npos) << states[1].why;
    EXPECT_EQ(states[1].line(), "chip 1: lost (" + states[1].why + ")");
    EXPECT_EQ(w.child_status(), (std::vector<std::string>{states[0].line(), states[1].line()}));
    w.close();
}

TEST(WorkerStatus, AReportFromBelowReadsAfterUsable) {
    ChildStatus s;
    s.child = ChildRef{ChildKind::WORKER, 0};
    s.below_lost = 1;
    s.below = "chip 1: lost (CHILD_DIED)";
    EXPECT_EQ(s.line(), "worker 0: usable; lost below it: chip 1: lost (CHILD_DIED)");
}

}  // namespace
}  // namespace simpler
