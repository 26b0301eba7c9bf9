// EngineCore's chained dispatch across chips (EngineConfig::cross_chip): a
// chip task whose unfinished producers are in flight on its own lane or on
// other chips' open lanes goes to its chip at once, naming the others in
// Dispatch::lane_producers (an empty lane is claimed from the queue); a
// producer on a closed lane, on no lane, or too many of them keep it in the
// parent; a failed producer withdraws it from its lane at once; a result back
// before its producers' (and one behind it on its lane) is finished after them.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using engine_test::ident;

namespace {

Tensor vec(uint64_t buffer) {  // 64 UINT8 of a host buffer
    const uint8_t name[] = "sptest";
    const BufferDescriptor b = make_buffer_descriptor(ident(buffer), BackendKind::POSIX_SHM, AddressSpace::HOST,
                                                      AccessMode::READWRITE, 64, {name, 6});
    const uint32_t shape[] = {64};
    return make_tensor(b, shape, DataType::UINT8);
}

// Reads `from` (each), writes `to`.
TaskArgs reads(std::initializer_list<uint64_t> from, uint64_t to) {
    TaskArgs a;
    for (uint64_t f : from) a.add_tensor(vec(f), TensorArgType::INPUT);
    a.add_tensor(vec(to), TensorArgType::OUTPUT_EXISTING);
    return a;
}

// `chips` chip lanes `depth` tasks deep, chained across chips; the withdrawals
// the engine asks for are recorded, and granted while `grant`.
struct Harness : engine_test::Harness {
    std::vector<std::pair<TaskId, uint32_t>> withdrawals;
    bool grant = true;
    explicit Harness(uint32_t chips = 2, bool cross = true, uint32_t depth = 2)
        : engine_test::Harness([&] {
              EngineConfig c = engine_test::children(chips, 0);
              c.chip_lane_depth = depth;
              c.cross_chip = cross;
              c.withdraw = [this](TaskId t, ChildRef chip) {
                  withdrawals.emplace_back(t, chip.index);
                  return grant;
              };
              return c;
          }()) {}
};

std::vector<std::pair<uint32_t, TaskId>> producers(const Dispatch& d) {
    std::vector<std::pair<uint32_t, TaskId>> out;
    for (const Dispatch::LaneProducer& p : d.producers_elsewhere()) out.emplace_back(p.chip, p.task);
    return out;
}

}  // namespace

TEST(EngineCrossChain, AStencilPointGoesToItsChipNamingItsNeighbourOnTheOtherChip) {
    Harness h;
    const TaskArgs left = reads({1}, 2), right = reads({3}, 4), next = reads({2, 4}, 5);
    const TaskId t1 = h.chip_task(left, 0);
    const TaskId t2 = h.chip_task(right, 1);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 2u);
    const TaskId t3 = h.chip_task(next, 0);
    std::vector<Dispatch> d3 = h.take();
    ASSERT_EQ(d3.size(), 1u);
    EXPECT_EQ(d3[0].task.id, t3);
    EXPECT_EQ(d3[0].after_mask, 1u);  // t1, ahead of it on chip 0
    EXPECT_EQ(producers(d3[0]), (std::vector<std::pair<uint32_t, TaskId>>{{1, t2}}));
    h.core.member_finished(d[1], {});  // t2 first: t3 still waits for t1 in the graph
    h.core.member_finished(d[0], {});
    h.core.member_finished(d3[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_FALSE(h.core.first_failure());
    EXPECT_TRUE(h.withdrawals.empty());
    (void)t1;
}

TEST(EngineCrossChain, WithProducersOnlyElsewhereItClaimsItsIdleChipAndWhatFollowsGoesBehindIt) {
    Harness h;
    const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3), later = reads({7}, 8);
    const TaskId t1 = h.chip_task(produce, 1);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 1u);
    const TaskId t2 = h.chip_task(consume, 0);
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 1u);
    EXPECT_EQ(d2[0].after_mask, 0u);
    EXPECT_EQ(producers(d2[0]), (std::vector<std::pair<uint32_t, TaskId>>{{1, t1}}));
    const TaskId t3 = h.chip_task(later, 0);  // ready, and chip 0 is busy with t2: behind it
    std::vector<Dispatch> d3 = h.take();
    ASSERT_EQ(d3.size(), 1u);
    EXPECT_EQ(d3[0].task.id, t3);
    EXPECT_EQ(d3[0].lane_producer_count, 0u);
    h.core.member_finished(d[0], {});
    h.core.member_finished(d2[0], {});
    h.core.member_finished(d3[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    (void)t2;
}

TEST(EngineCrossChain, OffItWaitsInTheParentAsBefore) {
    Harness h(2, false);
    const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3);
    h.chip_task(produce, 1);
    std::vector<Dispatch> d = h.take();
    const TaskId t2 = h.chip_task(consume, 0);
    EXPECT_TRUE(h.take().empty());
    h.core.member_finished(d[0], {});
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 1u);
    EXPECT_EQ(d2[0].task.id, t2);
    EXPECT_EQ(d2[0].lane_producer_count, 0u);
}

TEST(EngineCrossChain, AProducerOnAClosedLaneKeepsItInTheParent) {
    Harness h;
    const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3);
    h.chip_task(produce, 1);
    std::vector<Dispatch> d = h.take();
    h.chip_task(consume, 0);
    // Chip 1 has a control message waiting: its next publish could be held, so nothing may name it.
    EXPECT_TRUE(h.take([](ChildRef c) { return c.index != 1; }).empty());
    EXPECT_EQ(h.take().size(), 0u);  // a candidate once: tried again when something on the lanes moves
    h.core.member_finished(d[0], {});
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineCrossChain, AnIdleChipAQueuedGroupWaitsForIsNotClaimed) {
    Harness h;
    const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3), m0 = reads({9}, 10), m1 = reads({11}, 12);
    h.chip_task(produce, 1);
    std::vector<Dispatch> d = h.take();
    // A group on both chips waits for chip 1, holding chip 0 for itself.
    const MemberSubmit group[] = {{&m0, 0u}, {&m1, 1u}};
    const TaskId g = h.core.submit(TaskKind::NEXT_LEVEL, 7, group, h.config).id;
    h.chip_task(consume, 0);
    EXPECT_TRUE(h.take().empty());  // the consumer does not take chip 0 from the group
    h.core.member_finished(d[0], {});
    std::vector<Dispatch> next = h.take();
    ASSERT_GE(next.size(), 2u);
    EXPECT_EQ(next[0].task.id, g);  // the group first, then the consumer (ready now) behind it
    EXPECT_EQ(next[1].task.id, g);
}

TEST(EngineCrossChain, MoreProducersElsewhereThanAFrameHoldsKeepItInTheParent) {
    Harness h(4);
    std::vector<TaskArgs> args;
    for (uint64_t b = 0; b < 6; ++b) args.push_back(reads({100 + b}, 200 + b));
    for (uint32_t k = 0; k < 6; ++k) h.chip_task(args[k], 1 + k / 2);  // two on each of chips 1-3
    ASSERT_EQ(h.take().size(), 6u);
    const TaskArgs all = reads({200, 201, 202, 203, 204, 205}, 300);
    const TaskArgs four = reads({200, 201, 202, 203}, 301);
    h.chip_task(all, 0);
    const TaskId t4 = h.chip_task(four, 0);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 1u);  // four producers elsewhere fit a frame; six do not
    EXPECT_EQ(d[0].task.id, t4);
    EXPECT_EQ(d[0].lane_producer_count, 4u);
}

TEST(EngineCrossChain, AFailedProducerWithdrawsItsConsumerFromItsLaneAtOnce) {
    for (const bool granted : {true, false}) {
        Harness h;
        h.grant = granted;
        const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3), after = reads({3}, 4);
        const TaskId t1 = h.chip_task(produce, 1);
        std::vector<Dispatch> d = h.take();
        const TaskId t2 = h.chip_task(consume, 0);
        std::vector<Dispatch> d2 = h.take();
        ASSERT_EQ(d2.size(), 1u);
        const TaskId t3 = h.chip_task(after, 1);  // waits on t2 (chip 0), behind t1 on chip 1
        std::vector<Dispatch> d3 = h.take();
        ASSERT_EQ(d3.size(), 1u);
        EXPECT_EQ(producers(d3[0]), (std::vector<std::pair<uint32_t, TaskId>>{{0, t2}}));
        h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "kernel said no", nullptr});
        // Both are poisoned; each waiting across lanes is withdrawn (t3 only across: t1 is not its producer).
        EXPECT_EQ(h.withdrawals, (std::vector<std::pair<TaskId, uint32_t>>{{t2, 0}, {t3, 1}}));
        EXPECT_EQ(h.core.poisoned_count(), 2u);
        EXPECT_EQ(h.core.unfinished(), 2u);  // their lanes' answers are awaited either way
        h.core.member_finished(d2[0], MemberFault{FailureCode::SKIPPED, "withdrawn", nullptr});
        h.core.member_finished(d3[0], MemberFault{FailureCode::SKIPPED, "withdrawn", nullptr});
        EXPECT_EQ(h.core.unfinished(), 0u);
        ASSERT_TRUE(h.core.first_failure());
        EXPECT_EQ(h.core.first_failure()->task.id, t1);  // the skips are no failures of their own
    }
}

TEST(EngineCrossChain, AConsumersResultBackBeforeItsProducersIsFinishedAfterThem) {
    for (const bool producer_failed : {false, true}) {
        Harness h;
        const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3), after = reads({3}, 4);
        const TaskId t1 = h.chip_task(produce, 1);
        std::vector<Dispatch> d = h.take();
        const TaskId t2 = h.chip_task(consume, 0);
        std::vector<Dispatch> d2 = h.take();
        ASSERT_EQ(d2.size(), 1u);
        // The chip ran it once the board said t1 finished; the parent collects it first.
        h.core.member_finished(
            d2[0], producer_failed ? MemberFault{FailureCode::SKIPPED, "its producer failed", nullptr} : MemberFault{});
        EXPECT_EQ(h.core.unfinished(), 2u);
        EXPECT_FALSE(h.core.first_failure());
        // A successor of the early one waits for it in the parent: it is on no lane now.
        const TaskId t3 = h.chip_task(after, 1);
        EXPECT_TRUE(h.take().empty());
        h.core.member_finished(d[0],
                               producer_failed ? MemberFault{FailureCode::TASK_FAILED, "no", nullptr} : MemberFault{});
        EXPECT_EQ(h.core.unfinished(), producer_failed ? 0u : 1u);
        if (producer_failed) {
            ASSERT_TRUE(h.core.first_failure());
            EXPECT_EQ(h.core.first_failure()->task.id, t1);  // not the consumer's skip
            EXPECT_EQ(h.core.poisoned_count(), 2u);
            continue;
        }
        std::vector<Dispatch> d3 = h.take();
        ASSERT_EQ(d3.size(), 1u);
        EXPECT_EQ(d3[0].task.id, t3);
        h.core.member_finished(d3[0], {});
        EXPECT_EQ(h.core.unfinished(), 0u);
        EXPECT_FALSE(h.core.first_failure());
        (void)t2;
    }
}

TEST(EngineCrossChain, ATaskBehindAnEarlyOneOnItsLaneIsFinishedAfterItToo) {
    Harness h(2, true, 3);
    const TaskArgs produce = reads({1}, 2), consume = reads({2}, 3), next = reads({3}, 4);
    const TaskId t1 = h.chip_task(produce, 1);
    std::vector<Dispatch> d = h.take();
    h.chip_task(consume, 0);
    const TaskId t3 = h.chip_task(next, 0);
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 2u);  // t2 waits for t1 across; t3 behind t2 on chip 0
    EXPECT_EQ(d2[1].task.id, t3);
    EXPECT_EQ(d2[1].after_mask, 1u);
    EXPECT_EQ(d2[1].lane_producer_count, 0u);
    h.core.member_finished(d2[0], {});  // both back before t1's result
    h.core.member_finished(d2[1], {});
    EXPECT_EQ(h.core.unfinished(), 3u);
    h.core.member_finished(d[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_FALSE(h.core.first_failure());
    (void)t1;
}
