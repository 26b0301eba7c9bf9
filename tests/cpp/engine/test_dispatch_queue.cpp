// DispatchQueue: ready order per target, groups only when every member's
// target is free, no starvation of a waiting group, distinct sub-workers for a
// sub group, refusal of targets that could never be met, and take_behind's
// oldest item for a busy chip that passes nothing waiting for it.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "simpler/engine/dispatch_queue.h"

using simpler::Assignment;
using simpler::ChildCounts;
using simpler::ChildKind;
using simpler::ChildRef;
using simpler::DispatchQueue;
using simpler::MemberTarget;

namespace {

std::vector<Assignment> take(DispatchQueue& q) {
    std::vector<Assignment> out;
    q.take(out);
    return out;
}

ChildCounts counts(uint32_t chips, uint32_t sub_workers) {
    ChildCounts c{};
    c[static_cast<size_t>(ChildKind::CHIP)] = chips;
    c[static_cast<size_t>(ChildKind::SUB_WORKER)] = sub_workers;
    return c;
}
constexpr ChildRef chip(uint32_t i) noexcept { return {ChildKind::CHIP, i}; }
constexpr ChildRef sub_worker(uint32_t i) noexcept { return {ChildKind::SUB_WORKER, i}; }

const MemberTarget chip0[] = {MemberTarget::child(chip(0))};
const MemberTarget chip1[] = {MemberTarget::child(chip(1))};
const MemberTarget both_chips[] = {MemberTarget::child(chip(0)), MemberTarget::child(chip(1))};
const MemberTarget sub[] = {MemberTarget::any(ChildKind::SUB_WORKER)};
const MemberTarget two_subs[] = {MemberTarget::any(ChildKind::SUB_WORKER), MemberTarget::any(ChildKind::SUB_WORKER)};

}  // namespace

TEST(DispatchQueue, PlainTasksGoToTheirChipInReadyOrder) {
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    q.push(2, chip0);
    q.push(3, chip1);
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 1u);
    EXPECT_EQ(a[1].task, 3u);
    EXPECT_TRUE(take(q).empty());  // chip 0 is busy with task 1
    q.release(chip(0));
    a = take(q);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].task, 2u);
}

TEST(DispatchQueue, AGroupLeavesOnlyWhenEveryTargetIsFreeAndAllAtOnce) {
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    ASSERT_EQ(take(q).size(), 1u);
    q.push(2, both_chips);
    EXPECT_TRUE(take(q).empty());
    q.release(chip(0));
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 2u);
    EXPECT_EQ(a[1].task, 2u);
    EXPECT_EQ(a[0].child.index, 0u);
    EXPECT_EQ(a[1].child.index, 1u);
}

TEST(DispatchQueue, AWaitingGroupIsNotStarvedByLaterTasks) {
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    take(q);              // chip 0 busy
    q.push(2, both_chips);  // waits for chip 0, reserves chip 1
    q.push(3, chip1);       // would fit on chip 1 now, but the group reserved it
    EXPECT_TRUE(take(q).empty());
    q.release(chip(0));
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 2u);
    q.release(chip(0));
    q.release(chip(1));
    a = take(q);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].task, 3u);
}

TEST(DispatchQueue, LaterTasksOnOtherTargetsPassAWaitingItem) {
    DispatchQueue q(counts(2, 1));
    q.push(1, chip0);
    take(q);
    q.push(2, chip0);  // waits
    q.push(3, chip1);
    q.push(4, sub);
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 3u);
    EXPECT_EQ(a[1].task, 4u);
    EXPECT_EQ(a[1].child.kind, ChildKind::SUB_WORKER);
}

TEST(DispatchQueue, ASubGroupTakesDistinctSubWorkersAtOnce) {
    DispatchQueue q(counts(0, 2));
    q.push(1, sub);
    take(q);
    q.push(2, two_subs);
    EXPECT_TRUE(take(q).empty());
    q.push(3, sub);  // one sub-worker is free, but the group reserved it
    EXPECT_TRUE(take(q).empty());
    q.release(sub_worker(0));
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 2u);
    EXPECT_NE(a[0].child, a[1].child);
    EXPECT_EQ(q.free_count(ChildKind::SUB_WORKER), 0u);
}

TEST(DispatchQueue, TargetsThatCanNeverBeMetAreRefused) {
    DispatchQueue q(counts(2, 1));
    const MemberTarget bad_chip[] = {MemberTarget::child(chip(2))};
    const MemberTarget twice[] = {MemberTarget::child(chip(1)), MemberTarget::child(chip(1))};
    EXPECT_THROW(q.push(1, bad_chip), std::invalid_argument);
    EXPECT_THROW(q.push(2, twice), std::invalid_argument);
    EXPECT_THROW(q.push(3, two_subs), std::invalid_argument);
    EXPECT_THROW(q.push(4, std::span<const MemberTarget>{}), std::invalid_argument);
    EXPECT_EQ(q.queued(), 0u);
}

TEST(DispatchQueue, ADeadChipIsNeverFreeAgainAndDropRemovesItsWork) {
    DispatchQueue q(counts(2, 0));
    q.retire(chip(0));
    q.push(1, chip0);
    q.push(2, chip1);
    auto a = take(q);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].task, 2u);
    q.release(chip(0));  // no effect on a dead chip
    EXPECT_FALSE(q.free(chip(0)));
    EXPECT_TRUE(take(q).empty());
    EXPECT_TRUE(q.drop(1));
    EXPECT_FALSE(q.drop(1));
    EXPECT_EQ(q.queued(), 0u);
}

TEST(DispatchQueue, FreeAndLiveCountsFollowEveryChange) {
    DispatchQueue q(counts(3, 2));
    EXPECT_EQ(q.free_count(ChildKind::CHIP), 3u);
    EXPECT_EQ(q.live_count(ChildKind::CHIP), 3u);
    q.push(1, chip0);
    q.push(2, sub);
    ASSERT_EQ(take(q).size(), 2u);
    EXPECT_EQ(q.free_count(ChildKind::CHIP), 2u);
    EXPECT_EQ(q.free_count(ChildKind::SUB_WORKER), 1u);
    q.retire(chip(0));  // busy, then dead: neither free nor live
    EXPECT_EQ(q.free_count(ChildKind::CHIP), 2u);
    EXPECT_EQ(q.live_count(ChildKind::CHIP), 2u);
    q.release(chip(0));  // a dead child is not freed by its task finishing
    EXPECT_EQ(q.free_count(ChildKind::CHIP), 2u);
    q.retire(chip(1));  // free, then dead
    q.retire(chip(1));  // twice: counted once
    EXPECT_EQ(q.free_count(ChildKind::CHIP), 1u);
    EXPECT_EQ(q.live_count(ChildKind::CHIP), 1u);
    q.release(sub_worker(0));
    q.release(sub_worker(0));  // a free child released again stays counted once
    EXPECT_EQ(q.free_count(ChildKind::SUB_WORKER), 2u);
    EXPECT_THROW(q.retire(chip(3)), std::out_of_range);
    EXPECT_EQ(q.live_count(ChildKind::CHIP), 1u);
}

TEST(DispatchQueue, ItemsForFreeChildrenLeaveFromBehindALongQueueForABusyChip) {
    DispatchQueue q(counts(2, 1));
    q.push(1, chip0);
    ASSERT_EQ(take(q).size(), 1u);  // chip 0 busy from here on
    for (simpler::TaskId t = 2; t < 1002; ++t) q.push(t, chip0);
    q.push(1002, chip1);
    q.push(1003, sub);
    q.push(1004, chip1);
    auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 1002u);
    EXPECT_EQ(a[1].task, 1003u);
    EXPECT_TRUE(take(q).empty());  // every child busy: nothing behind them can leave
    q.release(chip(0));
    q.release(chip(1));
    a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 2u);
    EXPECT_EQ(a[1].task, 1004u);
}

TEST(DispatchQueue, ASubTaskBehindAThousandWaitingChipTasksStillLeaves) {
    DispatchQueue q(counts(2, 1));
    q.push(1, chip0);
    q.push(2, chip1);
    ASSERT_EQ(take(q).size(), 2u);  // both chips busy now
    for (simpler::TaskId t = 3; t < 1003; ++t) q.push(t, t % 2 ? chip1 : chip0);
    q.push(1003, sub);
    const auto out = take(q);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].task, 1003u);
    EXPECT_EQ(out[0].child.kind, ChildKind::SUB_WORKER);
    q.release(chip(1));
    const auto next = take(q);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].task, 3u);  // ready order within chip 1 holds
    EXPECT_EQ(q.queued(), 999u);
}

TEST(DispatchQueue, EachChipsTasksLeaveInReadyOrderThroughOutOfOrderLeavesAndDrops) {
    // 3 chips, 600 tasks in a scrambled chip order, chips released in another
    // order: items leave from the front, the middle and behind waiting ones
    // (the storage's compaction included), and dropped ones never leave.
    DispatchQueue q(counts(3, 0));
    const MemberTarget* chips[] = {chip0, chip1, nullptr};
    const MemberTarget chip2[] = {MemberTarget::child(chip(2))};
    chips[2] = chip2;
    std::vector<std::vector<uint64_t>> expected(3);
    uint64_t state = 12345;
    auto next = [&] { return state = state * 6364136223846793005u + 1442695040888963407u, state >> 33; };
    for (uint64_t t = 1; t <= 600; ++t) {
        const size_t c = next() % 3;
        q.push(t, {chips[c], 1});
        if (t % 7 != 0) expected[c].push_back(t);
    }
    for (uint64_t t = 7; t <= 600; t += 7) EXPECT_TRUE(q.drop(t));
    EXPECT_FALSE(q.drop(7));
    std::vector<std::vector<uint64_t>> left(3);
    size_t total = 0;
    while (q.queued() > 0) {
        for (const Assignment& a : take(q)) {
            left[a.child.index].push_back(a.task);
            ++total;
        }
        q.release(chip(static_cast<uint32_t>(next() % 3)));
    }
    EXPECT_EQ(left, expected);
    EXPECT_EQ(total, 600u - 600u / 7);
}

TEST(DispatchQueue, AGroupOfANamedAndAnAnySubWorkerRunsOnTwoSubWorkers) {
    // The "any" member was handed the named member's child (sub-worker 0 twice).
    DispatchQueue q(counts(0, 2));
    const MemberTarget named_and_any[] = {MemberTarget::any(ChildKind::SUB_WORKER), MemberTarget::child(sub_worker(0))};
    q.push(1, named_and_any);
    const auto a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].child, sub_worker(1));
    EXPECT_EQ(a[1].child, sub_worker(0));
    EXPECT_EQ(q.free_count(ChildKind::SUB_WORKER), 0u);
}

TEST(DispatchQueue, ANamedSubTaskDoesNotTakeAChildAWaitingGroupClaims) {
    // 2 sub-workers, 1 busy: a waiting group of two "any" members claims both,
    // so a later task naming the free one waits behind it (it went ahead, and a
    // stream of such tasks starved the group).
    DispatchQueue q(counts(1, 2));
    q.push(1, sub);
    ASSERT_EQ(take(q).size(), 1u);  // sub-worker 0 busy
    const MemberTarget on_sub1[] = {MemberTarget::child(sub_worker(1))};
    q.push(2, two_subs);
    q.push(3, on_sub1);
    q.push(4, chip0);  // another kind still leaves
    auto a = take(q);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].task, 4u);
    q.release(sub_worker(0));
    a = take(q);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].task, 2u);
    EXPECT_EQ(a[1].task, 2u);
}

// take_behind: the oldest item naming a busy child, for the lane behind what it runs.
TEST(DispatchQueue, TakeBehindHandsABusyChipItsOldestQueuedTaskAndKeepsItBusy) {
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    q.push(2, chip0);
    q.push(3, chip0);
    EXPECT_FALSE(q.take_behind(chip(0)));  // chip 0 is free: take() hands it out
    ASSERT_EQ(take(q).size(), 1u);         // task 1 on chip 0
    EXPECT_EQ(q.take_behind(chip(0)), std::optional<simpler::TaskId>(2));
    EXPECT_EQ(q.queued(), 1u);
    EXPECT_FALSE(q.free(chip(0)));
    EXPECT_FALSE(q.take_behind(chip(1)));  // free, and nothing names it
    q.release(chip(0));
    const auto a = take(q);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].task, 3u);
    EXPECT_FALSE(q.take_behind(chip(0)));  // busy, nothing left for it
}

TEST(DispatchQueue, TakeBehindNeverPassesAnEarlierItemThatWaitsForTheSameChip) {
    const MemberTarget any_chip[] = {MemberTarget::any(ChildKind::CHIP)};
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    q.push(2, chip1);
    ASSERT_EQ(take(q).size(), 2u);  // both chips busy
    q.push(3, any_chip);            // the first chip that frees
    q.push(4, chip0);
    EXPECT_FALSE(q.take_behind(chip(0)));  // 3 is older and could take chip 0 once it frees
    q.release(chip(1));
    ASSERT_EQ(take(q).size(), 1u);  // 3 on chip 1
    EXPECT_EQ(q.take_behind(chip(0)), std::optional<simpler::TaskId>(4));

    DispatchQueue g(counts(2, 0));
    g.push(1, chip0);
    ASSERT_EQ(take(g).size(), 1u);
    g.push(2, both_chips);  // waits for chip 0, and holds chip 1
    g.push(3, chip0);
    EXPECT_FALSE(g.take_behind(chip(0)));  // the group is older and needs chip 0
    g.release(chip(0));
    ASSERT_EQ(take(g).size(), 2u);  // the group, on both chips
    EXPECT_EQ(g.take_behind(chip(0)), std::optional<simpler::TaskId>(3));
}

TEST(DispatchQueue, TakeBehindPassesALaterGroupAndNeverServesADeadChip) {
    DispatchQueue q(counts(2, 0));
    q.push(1, chip0);
    ASSERT_EQ(take(q).size(), 1u);
    q.push(2, chip0);
    q.push(3, both_chips);  // later than 2: it waits behind it as it would anyway
    EXPECT_EQ(q.take_behind(chip(0)), std::optional<simpler::TaskId>(2));
    q.push(4, chip1);
    q.retire(chip(1));
    EXPECT_FALSE(q.take_behind(chip(1)));  // dead: its items stay queued (the engine poisons them)
    EXPECT_TRUE(q.drop(4));
}
