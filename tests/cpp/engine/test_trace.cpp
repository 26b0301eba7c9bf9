// TraceRecorder on its own (what each event holds, the cap, lost and refused
// members, clear) and through a real Worker with two forked sub-worker lanes:
// tasks on disjoint data have overlapping RUN intervals, a dependent chain has
// disjoint ones, every task has a SUBMIT before its RUN, chip and sub-worker
// lanes are told apart, and a Worker without trace records nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "simpler/engine/trace.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

ChildRef chip_ref(uint32_t i) { return {ChildKind::CHIP, i}; }
ChildRef sub_worker(uint32_t i) { return {ChildKind::SUB_WORKER, i}; }

Dispatch dispatch(TaskId task, uint32_t member, ChildRef child, uint64_t callable) {
    const TaskKind kind = child.kind == ChildKind::SUB_WORKER ? TaskKind::SUB : TaskKind::NEXT_LEVEL;
    return Dispatch{TaskHandle{task, 0}, kind, member, child, callable, {}, nullptr};
}

// scalars: [milliseconds to sleep]
ipc::TaskHandler sleeper() {
    return [](const ipc::TaskView& task) -> ipc::TaskOutcome {
        DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(args.scalars.at(0)));
        return {};
    };
}

BufferDescriptor buffer(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x44, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    const uint8_t name[] = "sptrace";
    return make_buffer_descriptor(c, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 256, {name, 7});
}

TaskArgs sleep_on(const BufferDescriptor& b, uint32_t offset, TensorArgType tag, uint64_t ms) {
    const uint32_t shapes[] = {16}, strides[] = {1};
    TaskArgs a;
    a.add_tensor(make_tensor(b, shapes, DataType::UINT8, strides, offset), tag);
    a.add_scalar(ms);
    return a;
}

WorkerConfig traced_subs(uint32_t subs, bool trace = true) {
    WorkerConfig c;
    c.num_sub_workers = subs;
    c.sub_handler = [](uint32_t) { return sleeper(); };
    c.close_grace = 500ms;
    c.trace = trace;
    return c;
}

TaskId submit_sub(Worker& w, const TaskArgs& a, uint64_t callable = 7) {
    MemberSubmit m{&a, std::nullopt};
    return w.submit(TaskKind::SUB, callable, {&m, 1}, TaskConfig{}).id;
}

const TraceEvent* run_of(const std::vector<TraceEvent>& events, TaskId task) {
    for (const TraceEvent& e : events)
        if (e.phase == TracePhase::RUN && e.task.id == task) return &e;
    return nullptr;
}

const TraceEvent* submit_of(const std::vector<TraceEvent>& events, TaskId task) {
    for (const TraceEvent& e : events)
        if (e.phase == TracePhase::SUBMIT && e.task.id == task) return &e;
    return nullptr;
}

bool overlap(const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

}  // namespace

TEST(TraceRecorder, RecordsASubmitAndAPublishToCollectInterval) {
    TraceRecorder r;
    r.submitted(TaskHandle{5, 0}, TaskKind::NEXT_LEVEL, 9, 2, 100);
    r.published(1, dispatch(5, 1, chip_ref(1), 9), 150);
    EXPECT_EQ(r.events().size(), 1u) << "a member in flight is not an event yet";
    r.collected(1, "", 400);
    ASSERT_EQ(r.events().size(), 2u);
    const TraceEvent& s = r.events()[0];
    EXPECT_EQ(s.phase, TracePhase::SUBMIT);
    EXPECT_EQ(s.task.id, 5u);
    EXPECT_EQ(s.members, 2u);
    EXPECT_EQ(s.callable, 9u);
    EXPECT_EQ(s.start_ns, 100);
    EXPECT_EQ(s.end_ns, 100);
    const TraceEvent& e = r.events()[1];
    EXPECT_EQ(e.phase, TracePhase::RUN);
    EXPECT_EQ(e.kind, TaskKind::NEXT_LEVEL);
    EXPECT_EQ(e.task.id, 5u);
    EXPECT_EQ(e.member, 1u);
    EXPECT_EQ(e.child, chip_ref(1));
    EXPECT_EQ(e.callable, 9u);
    EXPECT_EQ(e.start_ns, 150);
    EXPECT_EQ(e.end_ns, 400);
    EXPECT_TRUE(e.ok);
    EXPECT_TRUE(e.error.empty());
}

TEST(TraceRecorder, AFailedResultKeepsItsText) {
    TraceRecorder r;
    r.published(3, dispatch(2, 0, sub_worker(1), 4), 10);
    r.collected(3, "TASK_FAILED: boom", 20);
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_EQ(r.events()[0].kind, TaskKind::SUB);
    EXPECT_EQ(r.events()[0].child, sub_worker(1));
    EXPECT_FALSE(r.events()[0].ok);
    EXPECT_EQ(r.events()[0].error, "TASK_FAILED: boom");
}

TEST(TraceRecorder, LanesAreIndependentAndACollectWithoutPublishIsIgnored) {
    TraceRecorder r;
    r.collected(0, "", 5);
    r.published(0, dispatch(1, 0, sub_worker(0), 1), 10);
    r.published(1, dispatch(2, 0, sub_worker(1), 1), 11);
    r.collected(1, "", 30);
    r.collected(0, "", 40);
    r.collected(0, "", 50);  // nothing open on lane 0 any more
    ASSERT_EQ(r.events().size(), 2u);
    EXPECT_EQ(r.events()[0].task.id, 2u);
    EXPECT_EQ(r.events()[0].start_ns, 11);
    EXPECT_EQ(r.events()[1].task.id, 1u);
    EXPECT_EQ(r.events()[1].end_ns, 40);
}

TEST(TraceRecorder, KeepsAtMostItsCapacityAndCountsTheRestAsDropped) {
    TraceRecorder r(3);
    for (TaskId t = 1; t <= 5; ++t) r.submitted(TaskHandle{t, 0}, TaskKind::SUB, 0, 1, static_cast<int64_t>(t));
    r.published(0, dispatch(1, 0, sub_worker(0), 0), 10);
    r.collected(0, "", 11);
    EXPECT_EQ(r.capacity(), 3u);
    ASSERT_EQ(r.events().size(), 3u);
    EXPECT_EQ(r.events()[2].task.id, 3u) << "the first events are the ones kept";
    EXPECT_EQ(r.dropped(), 3u);
}

TEST(TraceRecorder, ALostLaneEndsItsOpenMemberFailed) {
    TraceRecorder r;
    r.published(2, dispatch(8, 0, chip_ref(2), 1), 10);
    r.lane_lost(2, "child killed by signal 9", 25);
    r.lane_lost(2, "again", 30);  // nothing open
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_FALSE(r.events()[0].ok);
    EXPECT_EQ(r.events()[0].end_ns, 25);
    EXPECT_EQ(r.events()[0].error, "child killed by signal 9");
}

TEST(TraceRecorder, AMemberNeverPublishedIsAZeroLengthFailure) {
    TraceRecorder r;
    r.not_published(dispatch(4, 0, chip_ref(0), 2), "the child is gone", 70);
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_EQ(r.events()[0].phase, TracePhase::RUN);
    EXPECT_EQ(r.events()[0].start_ns, 70);
    EXPECT_EQ(r.events()[0].end_ns, 70);
    EXPECT_FALSE(r.events()[0].ok);
    EXPECT_EQ(r.events()[0].error, "the child is gone");
}

TEST(TraceRecorder, ClearForgetsEventsAndDroppedButNotOpenMembers) {
    TraceRecorder r(1);
    r.submitted(TaskHandle{1, 0}, TaskKind::SUB, 0, 1, 1);
    r.submitted(TaskHandle{2, 0}, TaskKind::SUB, 0, 1, 2);
    r.published(0, dispatch(1, 0, sub_worker(0), 0), 3);
    r.clear();
    EXPECT_TRUE(r.events().empty());
    EXPECT_EQ(r.dropped(), 0u);
    r.collected(0, "", 9);
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_EQ(r.events()[0].start_ns, 3);
}

TEST(TraceRecorder, StampsNowOnTheSteadyClockByDefault) {
    TraceRecorder r;
    const int64_t before = trace_now_ns();
    r.submitted(TaskHandle{1, 0}, TaskKind::SUB, 0, 1);
    const int64_t after = trace_now_ns();
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_GE(r.events()[0].start_ns, before);
    EXPECT_LE(r.events()[0].start_ns, after);
}

TEST(TraceWorker, TasksOnDisjointDataOnTwoSubWorkersOverlapInTheTrace) {
    Worker w(traced_subs(2));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs left = sleep_on(x, 0, TensorArgType::OUTPUT_EXISTING, 100);
    TaskArgs right = sleep_on(x, 16, TensorArgType::OUTPUT_EXISTING, 100);
    const TaskId a = submit_sub(w, left), b = submit_sub(w, right);
    w.wait();
    const std::vector<TraceEvent> events = w.trace_events();
    const TraceEvent* ra = run_of(events, a);
    const TraceEvent* rb = run_of(events, b);
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    EXPECT_TRUE(overlap(*ra, *rb)) << "a: " << ra->start_ns << ".." << ra->end_ns << ", b: " << rb->start_ns << ".."
                                   << rb->end_ns;
    EXPECT_NE(ra->child, rb->child) << "two lanes at once";
    EXPECT_GE(ra->end_ns - ra->start_ns, 100'000'000) << "the interval contains the child's 100 ms run";
    EXPECT_TRUE(ra->ok && rb->ok);
    EXPECT_EQ(ra->callable, 7u);
    const TraceEvent* sa = submit_of(events, a);
    ASSERT_NE(sa, nullptr);
    EXPECT_LE(sa->start_ns, ra->start_ns) << "submitted before published";
    EXPECT_EQ(w.trace_dropped(), 0u);
    w.close();
}

TEST(TraceWorker, ADependentChainDoesNotOverlapInTheTrace) {
    Worker w(traced_subs(2));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs writer = sleep_on(x, 0, TensorArgType::OUTPUT_EXISTING, 100);
    TaskArgs reader = sleep_on(x, 0, TensorArgType::INPUT, 100);
    const TaskId a = submit_sub(w, writer), b = submit_sub(w, reader);
    w.wait();
    const std::vector<TraceEvent> events = w.trace_events();
    const TraceEvent* ra = run_of(events, a);
    const TraceEvent* rb = run_of(events, b);
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    EXPECT_FALSE(overlap(*ra, *rb)) << "the reader must wait for the writer";
    EXPECT_LE(ra->end_ns, rb->start_ns);
    const TraceEvent* sb = submit_of(events, b);
    ASSERT_NE(sb, nullptr);
    EXPECT_GE(rb->start_ns - sb->start_ns, 90'000'000) << "the reader queued while the writer ran";
    w.close();
}

TEST(TraceWorker, AFailedTaskIsAFailedRunAndClearEmptiesTheTrace) {
    WorkerConfig c = traced_subs(1);
    c.sub_handler = [](uint32_t) {
        return [](const ipc::TaskView&) -> ipc::TaskOutcome { return {ipc::TaskError::TASK_FAILED, "no"}; };
    };
    Worker w(std::move(c));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs a = sleep_on(x, 0, TensorArgType::OUTPUT_EXISTING, 0);
    const TaskId t = submit_sub(w, a);
    EXPECT_THROW(w.wait(), RunError);
    const std::vector<TraceEvent> events = w.trace_events();
    const TraceEvent* r = run_of(events, t);
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE(r->ok);
    EXPECT_NE(r->error.find("no"), std::string::npos) << r->error;
    w.trace_clear();
    EXPECT_TRUE(w.trace_events().empty());
    w.close();
}

TEST(TraceWorker, ChipAndSubWorkerLanesAreToldApart) {
    WorkerConfig c = traced_subs(1);
    c.num_chips = 2;
    c.chip_handler = [](uint32_t) { return sleeper(); };
    Worker w(std::move(c));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs chip1_args = sleep_on(x, 0, TensorArgType::OUTPUT_EXISTING, 1);
    TaskArgs sub_args = sleep_on(x, 16, TensorArgType::OUTPUT_EXISTING, 1);
    const MemberSubmit m{&chip1_args, 1};
    const TaskId chip_task = w.submit(TaskKind::NEXT_LEVEL, 3, {&m, 1}, TaskConfig{}).id;
    const TaskId sub_task = submit_sub(w, sub_args);
    w.wait();
    const std::vector<TraceEvent> events = w.trace_events();
    const TraceEvent* rc = run_of(events, chip_task);
    const TraceEvent* rs = run_of(events, sub_task);
    ASSERT_NE(rc, nullptr);
    ASSERT_NE(rs, nullptr);
    EXPECT_EQ(rc->kind, TaskKind::NEXT_LEVEL);
    EXPECT_EQ(rc->child, chip_ref(1));
    EXPECT_EQ(rc->child.name(), "chip 1");
    EXPECT_EQ(rc->callable, 3u);
    EXPECT_EQ(rs->kind, TaskKind::SUB);
    EXPECT_EQ(rs->child, sub_worker(0));
    EXPECT_EQ(rs->child.name(), "sub-worker 0");
    w.close();
}

TEST(TraceWorker, AWorkerWithoutTraceRecordsNothing) {
    Worker w(traced_subs(1, false));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs a = sleep_on(x, 0, TensorArgType::OUTPUT_EXISTING, 1);
    submit_sub(w, a);
    w.wait();
    EXPECT_TRUE(w.trace_events().empty());
    EXPECT_EQ(w.trace_dropped(), 0u);
    w.close();
}
