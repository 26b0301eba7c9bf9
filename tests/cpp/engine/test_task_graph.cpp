// TaskGraph: readiness follows predecessors, completion releases successors
// exactly once, a failure poisons every transitive successor with its root
// cause and never lets one run, and misuse is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "simpler/engine/task_graph.h"

using simpler::TaskGraph;
using simpler::TaskId;
using simpler::TaskState;

namespace {
std::vector<TaskId> ids(std::initializer_list<TaskId> l) { return l; }
}  // namespace

TEST(TaskGraph, ANodeWithoutUnfinishedPredecessorsIsReady) {
    TaskGraph g;
    EXPECT_EQ(g.add(1, {}), TaskState::READY);
    EXPECT_EQ(g.add(2, ids({1})), TaskState::PENDING);
    EXPECT_EQ(g.add(3, ids({99})), TaskState::READY);  // unknown: retired, as good as done
    EXPECT_EQ(g.unfinished(), 3u);
}

TEST(TaskGraph, CompletionReleasesSuccessorsOnceAllPredecessorsAreDone) {
    TaskGraph g;
    g.add(1, {});
    g.add(2, {});
    g.add(3, ids({1, 2, 1}));  // a duplicate predecessor counts once
    std::vector<TaskId> ready;
    g.start(1);
    g.complete(1, ready);
    EXPECT_TRUE(ready.empty());
    g.complete(2, ready);  // READY -> DONE directly is allowed
    EXPECT_EQ(ready, ids({3}));
    EXPECT_EQ(g.state(3), TaskState::READY);
    g.start(3);
    ready.clear();
    g.complete(3, ready);
    EXPECT_TRUE(ready.empty());
    EXPECT_EQ(g.unfinished(), 0u);
}

TEST(TaskGraph, APredecessorAlreadyDoneAddsNoWait) {
    TaskGraph g;
    std::vector<TaskId> ready;
    g.add(1, {});
    g.complete(1, ready);
    EXPECT_EQ(g.add(2, ids({1})), TaskState::READY);
}

TEST(TaskGraph, FailurePoisonsEveryTransitiveSuccessorWithTheRootCause) {
    TaskGraph g;
    g.add(1, {});
    g.add(2, ids({1}));
    g.add(3, ids({2}));
    g.add(4, {});          // independent
    g.add(5, ids({4, 3}));
    std::vector<TaskId> poisoned;
    g.start(1);
    g.fail(1, "kernel vadd: out of range", poisoned);
    std::sort(poisoned.begin(), poisoned.end());
    EXPECT_EQ(poisoned, ids({2, 3, 5}));
    EXPECT_EQ(g.state(1), TaskState::FAILED);
    for (TaskId t : {2, 3, 5}) {
        EXPECT_EQ(g.state(t), TaskState::POISONED);
        ASSERT_NE(g.failure(t), nullptr);
        EXPECT_EQ(g.failure(t)->task, 1u);
        EXPECT_EQ(g.failure(t)->message, "kernel vadd: out of range");
    }
    EXPECT_EQ(g.state(4), TaskState::READY);
    EXPECT_EQ(g.failure(4), nullptr);
    // The poisoned never run: completing the independent one releases nothing.
    std::vector<TaskId> ready;
    g.complete(4, ready);
    EXPECT_TRUE(ready.empty());
    EXPECT_EQ(g.unfinished(), 0u);
    EXPECT_THROW(g.start(2), std::logic_error);
}

TEST(TaskGraph, ANodeAddedAfterAFailedPredecessorIsPoisonedAtOnce) {
    TaskGraph g;
    std::vector<TaskId> poisoned;
    g.add(1, {});
    g.fail(1, "boom", poisoned);
    EXPECT_EQ(g.add(2, ids({1})), TaskState::POISONED);
    EXPECT_EQ(g.failure(2)->message, "boom");
    EXPECT_EQ(g.add(3, ids({2})), TaskState::POISONED);
    EXPECT_EQ(g.failure(3)->task, 1u);
    EXPECT_EQ(g.unfinished(), 0u);
}

TEST(TaskGraph, PoisonUnstartedLeavesRunningAndFinishedNodesAlone) {
    TaskGraph g;
    std::vector<TaskId> ready, poisoned;
    g.add(1, {});
    g.add(2, {});
    g.add(3, ids({1}));
    g.add(4, {});
    g.start(1);
    g.complete(4, ready);
    g.poison_unstarted({0, "worker closed"}, poisoned);
    std::sort(poisoned.begin(), poisoned.end());
    EXPECT_EQ(poisoned, ids({2, 3}));
    EXPECT_EQ(g.state(1), TaskState::RUNNING);
    EXPECT_EQ(g.state(4), TaskState::DONE);
    EXPECT_EQ(g.unfinished(), 1u);
}

TEST(TaskGraph, MisuseIsRefused) {
    TaskGraph g;
    std::vector<TaskId> out;
    g.add(1, ids({}));
    g.add(2, ids({1}));
    EXPECT_THROW(g.add(1, {}), std::logic_error);
    EXPECT_THROW(g.start(2), std::logic_error);          // still pending
    EXPECT_THROW(g.complete(2, out), std::logic_error);
    EXPECT_THROW(g.retire(1), std::logic_error);         // unfinished
    EXPECT_THROW((void)g.state(7), std::logic_error);
    g.complete(1, out);
    g.retire(1);
    EXPECT_FALSE(g.contains(1));
    EXPECT_EQ(g.state(2), TaskState::READY);
}

TEST(TaskGraph, RandomDagsReleaseEveryTaskExactlyOnceInADependencyOrder) {
    std::mt19937_64 rng(12345);
    for (int round = 0; round < 50; ++round) {
        TaskGraph g;
        const int n = 200;
        std::vector<std::vector<TaskId>> preds(n + 1);
        std::vector<TaskId> ready;
        for (TaskId t = 1; t <= n; ++t) {
            for (int k = 0; k < 3; ++k)
                if (t > 1 && rng() % 2) preds[t].push_back(1 + rng() % (t - 1));
            if (g.add(t, preds[t]) == TaskState::READY) ready.push_back(t);
        }
        std::set<TaskId> done;
        while (!ready.empty()) {
            const size_t pick = rng() % ready.size();
            const TaskId t = ready[pick];
            ready.erase(ready.begin() + static_cast<long>(pick));
            for (TaskId p : preds[t]) ASSERT_TRUE(done.contains(p)) << t << " ran before " << p;
            ASSERT_TRUE(done.insert(t).second);
            g.start(t);
            g.complete(t, ready);
        }
        EXPECT_EQ(done.size(), static_cast<size_t>(n));
        EXPECT_EQ(g.unfinished(), 0u);
    }
}

TEST(TaskGraph, ANodeInARecycledSlotHasNoSuccessorsAndNoCause) {
    TaskGraph g;
    std::vector<TaskId> out;
    g.add(1, {});
    g.add(2, ids({1}));
    g.add(3, ids({1}));
    g.fail(1, "boom", out);  // 2 and 3 poisoned, with 1's cause
    EXPECT_EQ(out.size(), 2u);
    for (TaskId t : {1, 2, 3}) g.retire(t);
    // 4, 5, 6 take the freed slots: 4 must not release or poison what 1 knew.
    EXPECT_EQ(g.add(4, {}), TaskState::READY);
    EXPECT_EQ(g.failure(4), nullptr);
    EXPECT_EQ(g.add(5, {}), TaskState::READY);
    EXPECT_EQ(g.add(6, ids({5})), TaskState::PENDING);
    out.clear();
    g.complete(4, out);
    EXPECT_TRUE(out.empty());  // no successor inherited
    g.complete(5, out);
    EXPECT_EQ(out, ids({6}));
    EXPECT_EQ(g.state(6), TaskState::READY);
}
