// EngineCore's runs: several in flight at once, each finishing on its own with
// its own failures; a task poisoned by another run's failure names it as its
// cause; a cancelled run's tasks still on a child are waited for by later runs.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"

using namespace simpler;

namespace {

BufferDescriptor host_buffer(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x42, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    const uint8_t name[] = "sptest";
    return make_buffer_descriptor(c, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 64, {name, 6});
}

TaskArgs one(const BufferDescriptor& b, TensorArgType tag) {
    const uint32_t shapes[] = {64};
    TaskArgs a;
    a.add_tensor(make_tensor(b, shapes, DataType::UINT8), tag);
    return a;
}

struct Harness {
    Harness() : core(config()) {}
    static EngineConfig config() {
        EngineConfig c;
        c.children[static_cast<size_t>(ChildKind::SUB_WORKER)] = 2;
        return c;
    }
    EngineCore core;
    TaskConfig task_config{};

    TaskHandle sub_task(const TaskArgs& a) {
        MemberSubmit m{&a, std::nullopt};
        return core.submit(TaskKind::SUB, 9, {&m, 1}, task_config);
    }
    std::vector<Dispatch> take() {
        std::vector<Dispatch> out;
        core.take(out);
        return out;
    }
};

}  // namespace

TEST(EngineRuns, TwoRunsInFlightFinishEachOnItsOwn) {
    Harness h;
    const BufferDescriptor b = host_buffer(1);
    const BufferDescriptor other = host_buffer(2);
    const TaskHandle writer = h.sub_task(one(b, TensorArgType::OUTPUT_EXISTING));
    EXPECT_EQ(h.core.end_run(), 0u);
    const TaskHandle reader = h.sub_task(one(b, TensorArgType::INPUT));
    const TaskHandle free_task = h.sub_task(one(other, TensorArgType::OUTPUT_EXISTING));
    EXPECT_EQ(h.core.end_run(true), 1u);
    EXPECT_EQ(writer.run, 0u);
    EXPECT_EQ(reader.run, 1u);
    EXPECT_EQ(h.core.collected_runs(), (std::vector<uint64_t>{1}));
    std::vector<Dispatch> d = h.take();  // the writer and the independent task: the reader waits across runs
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].task, writer);
    EXPECT_EQ(d[1].task, free_task);
    h.core.member_finished(d[1], {});
    EXPECT_FALSE(h.core.run_finished(0));
    EXPECT_FALSE(h.core.run_finished(1));
    h.core.member_finished(d[0], {});
    EXPECT_TRUE(h.core.run_finished(0));
    EXPECT_FALSE(h.core.run_finished(1));
    EXPECT_TRUE(h.core.finished_collected_runs().empty());
    d = h.take();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].task, reader);
    h.core.member_finished(d[0], {});
    EXPECT_TRUE(h.core.run_finished(1));
    EXPECT_EQ(h.core.finished_collected_runs(), (std::vector<uint64_t>{1}));
    EXPECT_FALSE(h.core.run_state(0)->first_failure);
    h.core.forget_run(0);
    h.core.forget_run(1);
    EXPECT_EQ(h.core.run_state(1), nullptr);
    EXPECT_TRUE(h.core.run_finished(1));  // forgotten: reported
    EXPECT_FALSE(h.core.run_finished(2));  // not ended yet
}

TEST(EngineRuns, ATaskPoisonedByAnotherRunsFailureFailsItsOwnRunNamingTheCause) {
    Harness h;
    const BufferDescriptor b = host_buffer(1);
    const BufferDescriptor other = host_buffer(2);
    (void)h.sub_task(one(b, TensorArgType::OUTPUT_EXISTING));
    (void)h.core.end_run();
    const TaskHandle reader = h.sub_task(one(b, TensorArgType::INPUT));
    (void)h.sub_task(one(other, TensorArgType::OUTPUT_EXISTING));
    (void)h.core.end_run();
    const TaskHandle independent = h.sub_task(one(other, TensorArgType::INPUT));
    (void)h.core.end_run();
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 2u);
    h.core.member_finished(d[0], MemberFault{FailureCode::TASK_FAILED, "boom", nullptr});
    ASSERT_TRUE(h.core.run_finished(0));
    const RunState* failed = h.core.run_state(0);
    ASSERT_TRUE(failed->first_failure);
    EXPECT_EQ(failed->first_failure->fault.words(d[0].child), "TASK_FAILED: boom");
    EXPECT_EQ(failed->poisoned, 0u);  // its dependent is another run's
    const RunState* poisoned = h.core.run_state(1);
    ASSERT_TRUE(poisoned->first_failure);
    EXPECT_EQ(poisoned->first_failure->task, reader);
    ASSERT_TRUE(poisoned->first_failure->cause);
    EXPECT_EQ(poisoned->first_failure->cause->task, d[0].task);
    EXPECT_EQ(poisoned->first_failure->cause->fault.words(d[0].child), "TASK_FAILED: boom");
    EXPECT_EQ(poisoned->poisoned, 1u);
    EXPECT_FALSE(h.core.run_finished(1));  // its independent task is still out
    h.core.member_finished(d[1], {});
    EXPECT_TRUE(h.core.run_finished(1));
    d = h.take();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].task, independent);
    h.core.member_finished(d[0], {});
    EXPECT_FALSE(h.core.run_state(2)->first_failure);
    // Until run 0 is reported, a new reader of b is poisoned; once it is, the reader runs.
    const TaskHandle late = h.sub_task(one(b, TensorArgType::INPUT));
    EXPECT_TRUE(h.take().empty());
    EXPECT_EQ(h.core.run_state(late.run)->first_failure->task, late);
    (void)h.core.end_run();
    h.core.forget_run(0);
    (void)h.sub_task(one(b, TensorArgType::INPUT));
    EXPECT_EQ(h.take().size(), 1u);
}

TEST(EngineRuns, ACancelledRunsTaskOnAChildIsWaitedForByLaterRuns) {
    Harness h;
    const BufferDescriptor b = host_buffer(1);
    const BufferDescriptor other = host_buffer(2);
    (void)h.sub_task(one(b, TensorArgType::OUTPUT_EXISTING));
    (void)h.sub_task(one(b, TensorArgType::INPUT));  // queued behind it: cancelled
    std::vector<Dispatch> d = h.take();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(h.core.cancel_run(0, "interrupted"), 1u);
    EXPECT_EQ(h.core.current_run(), 1u);
    EXPECT_FALSE(h.core.run_state(0)->first_failure);  // a cancelled run reports nothing
    (void)h.sub_task(one(other, TensorArgType::OUTPUT_EXISTING));
    (void)h.core.end_run();
    std::vector<Dispatch> later = h.take();
    ASSERT_EQ(later.size(), 1u);
    h.core.member_finished(later[0], {});
    EXPECT_FALSE(h.core.run_finished(1));  // the cancelled run's task is still on its child
    h.core.member_finished(d[0], {});
    EXPECT_TRUE(h.core.run_finished(1));
    EXPECT_EQ(h.core.run_state(0), nullptr);  // forgotten once its last task came back
}
