// EngineCore's pooled per-task storage and batch checks: a task that reuses a
// finished task's record or graph node sees none of its arguments, edges,
// config or failure, and a run in a forgotten run's node none of its state; a batch asks the owner about each distinct
// buffer once, refuses with the message a lone submit gets, and leaves no verdict behind; a batch
// built on demand is asked for each task once per pass, with the caller's rule before the engine's.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine_core_harness.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;
using engine_test::children;
using engine_test::host_buffer;
using engine_test::tile;

namespace {

// Submits two sub tasks that write the same tile (the second after the first)
// and fails the first: the second is poisoned. Returns both ids.
std::pair<TaskId, TaskId> fail_the_first_of_two_writers(EngineCore& core) {
    TaskArgs w;
    w.add_tensor(tile(host_buffer(1), 0), TensorArgType::OUTPUT_EXISTING);
    const MemberSubmit m{&w, std::nullopt};
    const TaskId t1 = core.submit(TaskKind::SUB, 1, {&m, 1}, TaskConfig{}).id;
    const TaskId t2 = core.submit(TaskKind::SUB, 1, {&m, 1}, TaskConfig{}).id;
    std::vector<Dispatch> d;
    core.take(d);
    EXPECT_EQ(d.size(), 1u);
    if (!d.empty()) core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "boom", nullptr});
    return {t1, t2};
}

int32_t tensors_in(std::span<const std::byte> blob) {
    TaskArgsView view;
    EXPECT_TRUE(TaskArgsView::open(blob.data(), blob.size(), view).ok());
    return view.tensor_count();
}

void finish_all(EngineCore& core) {
    for (int round = 0; round < 1000 && core.unfinished() > 0; ++round) {
        std::vector<Dispatch> d;
        core.take(d);
        for (const Dispatch& x : d) core.member_finished(x, {});
    }
    ASSERT_EQ(core.unfinished(), 0u);
}

}  // namespace

TEST(EngineRecycling, ATaskInARecycledRecordCarriesNothingOfTheTaskBefore) {
    EngineCore core(children(2, 0));
    const BufferDescriptor a = host_buffer(1);
    TaskArgs writes;
    writes.add_tensor(tile(a, 0), TensorArgType::OUTPUT_EXISTING);
    writes.add_tensor(tile(a, 1), TensorArgType::INOUT);
    // A two-member group: its record holds two blobs and two configs with write masks.
    const MemberSubmit group[2] = {{&writes, 0}, {&writes, 1}};
    EXPECT_EQ(core.submit(TaskKind::NEXT_LEVEL, 5, group, TaskConfig{}).id, 1u);
    finish_all(core);

    const TaskArgs empty;
    const MemberSubmit one{&empty, 1};
    const TaskHandle t2 = core.submit(TaskKind::NEXT_LEVEL, 6, {&one, 1}, TaskConfig{});
    EXPECT_EQ(core.hold_users(a.identity), 0u);  // task 2 names no buffer: the old blobs are gone
    std::vector<Dispatch> d;
    core.take(d);
    ASSERT_EQ(d.size(), 1u);  // one member, not the old group's two
    EXPECT_EQ(d[0].task.id, t2.id);
    EXPECT_EQ(d[0].callable, 6u);
    EXPECT_EQ(d[0].child, (ChildRef{ChildKind::CHIP, 1}));
    EXPECT_EQ(tensors_in(d[0].blob), 0);
    EXPECT_EQ(*d[0].config, TaskConfig{});  // no write mask left from task 1
    core.member_finished(d[0], {});
    EXPECT_EQ(core.unfinished(), 0u);
    std::vector<CanonicalIdentity> unheld;
    core.take_unheld(unheld);
    EXPECT_TRUE(unheld.empty());
}

TEST(EngineRecycling, ARecycledTaskInheritsNoEdgesAndNoFailure) {
    EngineCore core(children(0, 1));
    // 1 fails; 2 (after it) is poisoned; both are retired once the failure is cleared.
    const auto [t1, t2] = fail_the_first_of_two_writers(core);
    EXPECT_EQ(core.unfinished(), 0u);
    (void)core.end_run();
    core.clear_failure();
    EXPECT_FALSE(core.first_failure().has_value());

    // New tasks take the freed records and nodes: independent ones run, none is poisoned.
    const TaskArgs empty;
    const MemberSubmit e{&empty, std::nullopt};
    for (int i = 0; i < 4; ++i) {
        const TaskId t = core.submit(TaskKind::SUB, 2, {&e, 1}, TaskConfig{}).id;
        EXPECT_GT(t, t2);
        std::vector<Dispatch> run;
        core.take(run);
        ASSERT_EQ(run.size(), 1u) << "task " << t << " is not ready";
        EXPECT_EQ(run[0].task.id, t);
        core.member_finished(run[0], {});
    }
    EXPECT_FALSE(core.first_failure().has_value());
    EXPECT_EQ(core.poisoned_count(), 0u);
    EXPECT_TRUE(core.tracker().edges_into(t1).empty());
}

TEST(EngineRecycling, ARunInAForgottenRunsNodeStartsEmpty) {
    EngineCore core(children(0, 1));
    // Run 0: a task fails and the one after it is poisoned; the run ends collected, then is forgotten.
    (void)fail_the_first_of_two_writers(core);
    ASSERT_EQ(core.end_run(/*collected=*/true), 0u);
    ASSERT_NE(core.run_state(0), nullptr);
    EXPECT_TRUE(core.run_state(0)->first_failure.has_value());
    EXPECT_EQ(core.run_state(0)->poisoned, 1u);
    core.forget_run(0);
    EXPECT_EQ(core.run_state(0), nullptr);

    // Run 1 takes run 0's node: none of its failure, counts or flags.
    const TaskArgs empty;
    const MemberSubmit e{&empty, std::nullopt};
    (void)core.submit(TaskKind::SUB, 2, {&e, 1}, TaskConfig{});
    const RunState* run = core.run_state(1);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->unfinished, 1u);
    EXPECT_FALSE(run->ended);
    EXPECT_FALSE(run->collected);
    EXPECT_FALSE(run->cancelled);
    EXPECT_FALSE(run->first_failure.has_value());
    EXPECT_EQ(run->poisoned, 0u);
    EXPECT_TRUE(run->failed_kept.empty());
    finish_all(core);
    EXPECT_FALSE(core.run_finished(1));  // not ended yet
    (void)core.end_run();
    EXPECT_TRUE(core.run_finished(1));
}

TEST(EngineRecycling, ABatchAsksTheOwnerOncePerDistinctBuffer) {
    size_t asked = 0;
    EngineConfig c = children(0, 1);
    c.descriptor_problem = [&](const BufferDescriptor&) {
        ++asked;
        return std::string();
    };
    EngineCore core(std::move(c));
    const BufferDescriptor bufs[4] = {host_buffer(1), host_buffer(2), host_buffer(3), host_buffer(4)};
    std::vector<TaskArgs> args(100);
    for (uint32_t k = 0; k < args.size(); ++k)
        for (const BufferDescriptor& b : bufs) args[k].add_tensor(tile(b, k % 200), TensorArgType::INPUT);
    std::vector<MemberSubmit> batch;
    for (const TaskArgs& a : args) batch.push_back({&a, std::nullopt});
    EXPECT_FALSE(core.check_batch(core.next_task_id(), TaskKind::SUB, batch).has_value());
    EXPECT_EQ(asked, 4u);
    // A lone check asks again: no verdict outlives its batch.
    core.check_submit(core.next_task_id(), TaskKind::SUB, {&batch[0], 1});
    EXPECT_EQ(asked, 8u);
}

TEST(EngineRecycling, ABatchRefusesTheTaskALoneSubmitWouldWithTheSameMessage) {
    const BufferDescriptor good = host_buffer(1);
    const BufferDescriptor bad = host_buffer(2);
    EngineConfig c = children(0, 1);
    c.descriptor_problem = [bad](const BufferDescriptor& d) {
        return d == bad ? std::string("forged for the test") : std::string();
    };
    EngineCore core(std::move(c));
    TaskArgs ok;
    ok.add_tensor(tile(good, 0), TensorArgType::INPUT);
    TaskArgs refused;
    refused.add_tensor(tile(good, 1), TensorArgType::INPUT);
    refused.add_tensor(tile(bad, 0), TensorArgType::INPUT);
    const std::vector<MemberSubmit> batch = {{&ok, std::nullopt}, {&ok, std::nullopt}, {&refused, std::nullopt}};
    const TaskId first = core.next_task_id();
    const std::optional<BatchCheckRefusal> r = core.check_batch(first, TaskKind::SUB, batch);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->index, 2u);
    std::string alone;
    try {
        core.check_submit(first + 2, TaskKind::SUB, {&batch[2], 1});
    } catch (const std::invalid_argument& e) {
        alone = e.what();
    }
    EXPECT_EQ(r->message, alone);
    EXPECT_NE(r->message.find("member 0, argument 1"), std::string::npos) << r->message;
    EXPECT_NE(r->message.find("forged for the test"), std::string::npos) << r->message;
    EXPECT_EQ(core.unfinished(), 0u);  // nothing recorded
    EXPECT_EQ(core.next_task_id(), first);
}

TEST(EngineRecycling, ABatchBuiltOnDemandIsCheckedTaskByTaskWithTheCallersRuleFirst) {
    // A source that builds each task into one scratch TaskArgs (as a tiling's
    // batch is submitted) and counts how often it was asked.
    class OnDemand final : public BatchSource {
    public:
        [[nodiscard]] size_t size() const noexcept override { return 6; }
        const MemberSubmit& task(size_t i) override {
            ++asked;
            scratch_.clear();
            scratch_.add_tensor(tile(host_buffer(1), static_cast<uint32_t>(i)), TensorArgType::OUTPUT_EXISTING);
            member_.args = &scratch_;
            return member_;
        }
        size_t asked = 0;

    private:
        TaskArgs scratch_;
        MemberSubmit member_;
    };
    EngineCore core(children(0, 1));
    OnDemand batch;
    const TaskId first = core.next_task_id();
    EXPECT_FALSE(core.check_batch(first, TaskKind::SUB, batch).has_value());
    EXPECT_EQ(batch.asked, 6u);
    // The caller's rule sees each task before the engine's checks, and its refusal stops the pass.
    std::vector<uint64_t> offsets;
    const std::optional<BatchCheckRefusal> r =
        core.check_batch(first, TaskKind::SUB, batch, [&](const MemberSubmit& m) {
            offsets.push_back(m.args->tensor(0).byte_offset);
            return offsets.size() == 4 ? std::string("the caller's own rule") : std::string();
        });
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->index, 3u);
    EXPECT_EQ(r->message, "the caller's own rule");
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 16, 32, 48}));
    EXPECT_EQ(core.unfinished(), 0u);  // nothing recorded
    EXPECT_EQ(core.next_task_id(), first);
}
