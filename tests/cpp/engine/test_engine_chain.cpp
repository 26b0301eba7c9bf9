// EngineCore's chained dispatch (chip_lane_depth 2): a chip task whose only
// unfinished producer is in flight on its chip goes there at once with the
// producer's position as its after mask, starts in the graph when the producer
// completes, and is poisoned (not failed) when the producer fails; a task
// with a producer anywhere else, or behind a queued task for the chip, waits
// in the parent as before; the chip stays busy until its lane is empty. A
// ready task naming a busy chip goes to its lane behind what it runs, with no
// mask, and a cancel poisons it only when the lane withdraws it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using engine_test::ident;

namespace {

Tensor matrix(uint64_t buffer) {  // 16x16 UINT8 of a host buffer
    const uint8_t name[] = "sptest";
    const BufferDescriptor b = make_buffer_descriptor(ident(buffer), BackendKind::POSIX_SHM, AddressSpace::HOST,
                                                      AccessMode::READWRITE, 256, {name, 6});
    const uint32_t shapes[] = {16, 16};
    return make_tensor(b, shapes, DataType::UINT8);
}

TaskArgs copy(uint64_t from, uint64_t to) {
    TaskArgs a;
    a.add_tensor(matrix(from), TensorArgType::INPUT);
    a.add_tensor(matrix(to), TensorArgType::OUTPUT_EXISTING);
    return a;
}

// Two chip lanes two tasks deep and a sub-worker, by default.
struct Harness : engine_test::Harness {
    explicit Harness(uint32_t chips = 2, uint32_t subs = 1)
        : engine_test::Harness([&] {
              EngineConfig c = engine_test::children(chips, subs);
              c.chip_lane_depth = 2;
              return c;
          }()) {}
};

}  // namespace

TEST(EngineChain, ADependentGoesToItsChipBehindItsProducerAndStartsWhenItCompletes) {
    Harness h;
    const TaskArgs a = copy(1, 2), b = copy(2, 3), c = copy(3, 4);
    const TaskId t1 = h.chip_task(a, 0);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].after_mask, 0u);
    const TaskId t2 = h.chip_task(b, 0);
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 1u);
    EXPECT_EQ(d2[0].task.id, t2);
    EXPECT_EQ(d2[0].after_mask, 1u);  // the task dispatched one before it on chip 0
    const TaskId t3 = h.chip_task(c, 0);
    EXPECT_TRUE(h.take().empty());  // the lane holds two: t3 waits
    h.core.member_finished(d[0], {});
    std::vector<Dispatch> d3 = h.take();  // room again, and t3's only producer is on the chip
    ASSERT_EQ(d3.size(), 1u);
    EXPECT_EQ(d3[0].task.id, t3);
    EXPECT_EQ(d3[0].after_mask, 1u);
    h.core.member_finished(d2[0], {});
    h.core.member_finished(d3[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_FALSE(h.core.first_failure());
    (void)t1;
}

TEST(EngineChain, AFailedProducerPoisonsItsChainedTaskWhichFinishesWhenItsLaneReportsIt) {
    Harness h;
    const TaskArgs a = copy(1, 2), b = copy(2, 3);
    const TaskId t1 = h.chip_task(a, 0);
    std::vector<Dispatch> d = h.take();
    h.chip_task(b, 0);
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 1u);
    h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "kernel said no", nullptr});
    ASSERT_TRUE(h.core.first_failure());
    EXPECT_EQ(h.core.first_failure()->task.id, t1);
    EXPECT_EQ(h.core.poisoned_count(), 1u);   // as if it had waited in the parent
    EXPECT_EQ(h.core.unfinished(), 1u);       // still on the chip
    const RunState* run = h.core.run_state(h.core.current_run());
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->poisoned, 1u);
    h.core.member_finished(
        d2[0], MemberFault{FailureCode::SKIPPED, "not run: task 1 ahead of it on this lane, a producer of it, failed",
                           nullptr});
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_EQ(h.core.first_failure()->task.id, t1);  // the skip is no failure of its own
    EXPECT_EQ(h.core.first_failure()->fault.words(d[0].child), "TASK_FAILED: kernel said no");
}

TEST(EngineChain, AProducerElsewhereKeepsTheDependentInTheParent) {
    Harness h;
    const TaskArgs on_sub = copy(1, 2), on_chip = copy(9, 3);
    TaskArgs two_inputs;
    two_inputs.add_tensor(matrix(2), TensorArgType::INPUT);
    two_inputs.add_tensor(matrix(3), TensorArgType::INPUT);
    two_inputs.add_tensor(matrix(6), TensorArgType::OUTPUT_EXISTING);
    h.sub_task(on_sub);
    h.chip_task(on_chip, 0);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 2u);
    const TaskId t = h.chip_task(two_inputs, 0);  // one producer on the sub-worker: waits
    EXPECT_TRUE(h.take().empty());
    h.core.member_finished(d[0].kind == TaskKind::SUB ? d[0] : d[1], {});
    std::vector<Dispatch> next = h.take();  // now its only unfinished producer is on chip 0
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].task.id, t);
    EXPECT_EQ(next[0].after_mask, 1u);
}

TEST(EngineChain, AChainedTaskDoesNotPassATaskQueuedForItsChip) {
    Harness h(1, 0);
    const TaskArgs head = copy(1, 2), independent = copy(7, 8), dependent = copy(2, 3);
    h.chip_task(head, 0);
    std::vector<Dispatch> d = h.take();
    const TaskId queued = h.chip_task(independent, 0);  // ready; its lane is closed (a control message waits)
    h.chip_task(dependent, 0);                          // would chain behind head, but waits its turn
    const auto closed = [](ChildRef) { return false; };
    EXPECT_TRUE(h.take(closed).empty());
    h.core.member_finished(d[0], {});
    std::vector<Dispatch> next = h.take(closed);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].task.id, queued);
}

TEST(EngineChain, AReadyTaskForABusyChipGoesBehindWhatItRunsWithNoMask) {
    Harness h(1, 0);
    const TaskArgs head = copy(1, 2), second = copy(7, 8), third = copy(9, 10);
    h.chip_task(head, 0);
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 1u);
    const TaskId t2 = h.chip_task(second, 0);
    std::vector<Dispatch> d2 = h.take();  // ready: onto the lane behind head
    ASSERT_EQ(d2.size(), 1u);
    EXPECT_EQ(d2[0].task.id, t2);
    EXPECT_EQ(d2[0].after_mask, 0u);  // it needs nothing of head: it runs whatever head did
    const TaskId t3 = h.chip_task(third, 0);
    EXPECT_TRUE(h.take().empty());  // the lane holds two
    h.core.member_finished(d[0], {MemberFault{FailureCode::TASK_FAILED, "head failed", nullptr}});
    std::vector<Dispatch> d3 = h.take();  // room again: behind t2
    ASSERT_EQ(d3.size(), 1u);
    EXPECT_EQ(d3[0].task.id, t3);
    h.core.member_finished(d2[0], {});
    h.core.member_finished(d3[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
    EXPECT_EQ(h.core.poisoned_count(), 0u);  // head's failure touched neither
}

TEST(EngineChain, TheChipStaysBusyUntilItsLaneIsEmpty) {
    Harness h(1, 0);
    const TaskArgs a = copy(1, 2), b = copy(2, 3), other = copy(20, 21);
    h.chip_task(a, 0);
    std::vector<Dispatch> d = h.take();
    h.chip_task(b, 0);
    std::vector<Dispatch> d2 = h.take();  // chained behind a
    ASSERT_EQ(d2.size(), 1u);
    const TaskId later = h.chip_task(other, 0);
    EXPECT_TRUE(h.take().empty());     // the lane holds two
    h.core.member_finished(d[0], {});  // the chained task is still on the chip: busy
    std::vector<Dispatch> d3 = h.take();
    ASSERT_EQ(d3.size(), 1u);  // behind b, not on a free chip
    EXPECT_EQ(d3[0].task.id, later);
    EXPECT_EQ(d3[0].after_mask, 0u);
    h.core.member_finished(d2[0], {});
    h.core.member_finished(d3[0], {});
    EXPECT_EQ(h.core.unfinished(), 0u);
}

TEST(EngineChain, ACancelPoisonsATaskBehindItsChipsRunningOneOnlyWhenItsLaneWithdrawsIt) {
    for (const bool won : {true, false}) {
        Harness h(1, 0);
        const TaskArgs head = copy(1, 2), second = copy(7, 8);
        h.chip_task(head, 0);
        std::vector<Dispatch> d = h.take();
        const TaskId t2 = h.chip_task(second, 0);
        std::vector<Dispatch> d2 = h.take();
        ASSERT_EQ(d2.size(), 1u);
        EXPECT_EQ(h.core.hold_users(ident(7)), 1u);  // a released backing only t2 names
        std::vector<TaskId> asked;
        const size_t cancelled = h.core.cancel_run(0, "cancelled by the test", [&](TaskId t, ChildRef) {
            asked.push_back(t);
            return won;
        });
        EXPECT_EQ(asked, std::vector<TaskId>{t2});  // head runs: never asked
        EXPECT_EQ(cancelled, won ? 1u : 0u);
        EXPECT_EQ(h.core.unfinished(), 2u);  // both wait for their lane's answers
        std::vector<CanonicalIdentity> unheld;
        h.core.take_unheld(unheld);
        // Withdrawn, t2 never begins: what it names is free at once, not at the lane's answer.
        EXPECT_EQ(unheld, won ? std::vector<CanonicalIdentity>{ident(7)} : std::vector<CanonicalIdentity>{});
        h.core.member_finished(d[0], {});
        h.core.member_finished(d2[0], won ? MemberFault{FailureCode::SKIPPED, "withdrawn", nullptr} : MemberFault{});
        EXPECT_EQ(h.core.unfinished(), 0u);
        unheld.clear();
        h.core.take_unheld(unheld);
        EXPECT_EQ(unheld, won ? std::vector<CanonicalIdentity>{} : std::vector<CanonicalIdentity>{ident(7)});
    }
}

TEST(EngineChain, ClosingPoisonsATaskBehindItsChipsRunningOneButHoldsItsNamesUntilTheLaneAnswers) {
    Harness h(1, 0);
    const TaskArgs head = copy(1, 2), second = copy(7, 8);
    h.chip_task(head, 0);
    std::vector<Dispatch> d = h.take();
    h.chip_task(second, 0);
    std::vector<Dispatch> d2 = h.take();
    ASSERT_EQ(d2.size(), 1u);
    EXPECT_EQ(h.core.hold_users(ident(7)), 1u);
    h.core.abandon("the Worker closed");  // no withdrawal: the chip may be running it already
    std::vector<CanonicalIdentity> unheld;
    h.core.take_unheld(unheld);
    EXPECT_TRUE(unheld.empty());
    h.core.member_finished(d[0], {});
    h.core.member_finished(d2[0], {MemberFault{FailureCode::CHILD_DIED, "closed", nullptr}});
    h.core.take_unheld(unheld);
    EXPECT_EQ(unheld, std::vector<CanonicalIdentity>{ident(7)});
    EXPECT_EQ(h.core.unfinished(), 0u);
}
