// Worker, with real forked children: independent tasks on two chips run at once
// (a rendezvous) while dependent ones wait; a failing task fails wait() with the task,
// the worker and the cause, and its successors never run; a child killed
// mid-task or a hung task becomes an error, not a hang; the Worker stays usable
// without the lost child; close() from another thread ends a wait with an error
// naming what did not finish; a wait with a deadline returns and cancel_run()
// cancels what was not dispatched, a chained task its chip has not started too; close() leaves no child; an idle Worker
// sleeps; runs in flight at once finish and fail each on its own (wait_run, take_finished_runs); with
// max_unfinished a submit waits for room (every task still runs) and close() ends that wait.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "simpler/engine/worker.h"
#include "simpler/ipc/process_cpu.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

// Shared with the children (MAP_SHARED before fork): when each task slot ran.
struct Timeline {
    std::atomic<int64_t> start_us[64];
    std::atomic<int64_t> end_us[64];
    std::atomic<int> met;  // MEET tasks that have arrived
    std::atomic<bool> open;  // GATE tasks may finish
};

int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// MEET: a rendezvous of two tasks — each arrives, then waits (up to 20 s) for the
// other; both succeed only when they ran at the same time. GATE: waits (up to
// 20 s) until the test opens the gate.
enum Op : uint64_t { SLEEP = 0, FAIL = 1, KILL_SELF = 2, HANG = 3, MEET = 4, GATE = 5 };

// scalars: [op, milliseconds, timeline slot]
ipc::TaskHandler make_handler(Timeline* tl) {
    return [tl](const ipc::TaskView& task) -> ipc::TaskOutcome {
        DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
        const uint64_t op = args.scalars.at(0), ms = args.scalars.at(1), slot = args.scalars.at(2);
        tl->start_us[slot] = now_us();
        switch (op) {
            case FAIL:
                return {ipc::TaskError::TASK_FAILED, "kernel failed on purpose (slot " + std::to_string(slot) + ")"};
            case KILL_SELF: raise(SIGKILL); break;
            case HANG:
                for (;;) pause();
            case MEET: {
                tl->met.fetch_add(1);
                const auto give_up = std::chrono::steady_clock::now() + 20s;
                while (tl->met.load() < 2) {
                    if (std::chrono::steady_clock::now() > give_up)
                        return {ipc::TaskError::TASK_FAILED, "slot " + std::to_string(slot) + " met no partner"};
                    std::this_thread::sleep_for(1ms);
                }
                break;
            }
            case GATE: {
                const auto give_up = std::chrono::steady_clock::now() + 20s;
                while (!tl->open.load()) {
                    if (std::chrono::steady_clock::now() > give_up)
                        return {ipc::TaskError::TASK_FAILED,
                                "slot " + std::to_string(slot) + ": the gate never opened"};
                    std::this_thread::sleep_for(1ms);
                }
                break;
            }
            default: std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        }
        tl->end_us[slot] = now_us();
        return {};
    };
}

CanonicalIdentity ident(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x33, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    return c;
}

BufferDescriptor buffer(uint64_t id) {
    const uint8_t name[] = "spworker";
    return make_buffer_descriptor(ident(id), BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 256,
                                  {name, 8});
}

Tensor cols(const BufferDescriptor& b, uint32_t c0, uint32_t n = 4) {
    const uint32_t shapes[] = {16, n}, strides[] = {16, 1};
    return make_tensor(b, shapes, DataType::UINT8, strides, c0);
}

TaskArgs task(std::initializer_list<std::pair<Tensor, TensorArgType>> tensors, Op op, uint64_t ms, uint64_t slot) {
    TaskArgs a;
    for (const auto& [t, tag] : tensors) a.add_tensor(t, tag);
    a.add_scalar(op);
    a.add_scalar(ms);
    a.add_scalar(slot);
    return a;
}

class WorkerTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Timeline), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        tl_ = new (p) Timeline{};
    }
    void TearDown() override { munmap(tl_, sizeof(Timeline)); }

    WorkerConfig config(uint32_t chips, uint32_t subs = 0) {
        WorkerConfig c;
        c.num_chips = chips;
        c.num_sub_workers = subs;
        c.chip_handler = [tl = tl_](uint32_t) { return make_handler(tl); };
        c.sub_handler = [tl = tl_](uint32_t) { return make_handler(tl); };
        c.close_grace = 500ms;
        return c;
    }
    // One chip; a submit waits while `max_unfinished` tasks are unfinished.
    WorkerConfig bounded(uint64_t max_unfinished) {
        WorkerConfig c = config(1);
        c.max_unfinished = max_unfinished;
        return c;
    }
    TaskId chip_task(Worker& w, const TaskArgs& a, uint32_t chip) {
        MemberSubmit m{&a, chip};
        return w.submit(TaskKind::NEXT_LEVEL, 1, {&m, 1}, TaskConfig{}).id;
    }
    static bool alive(pid_t pid) { return kill(pid, 0) == 0; }

    Timeline* tl_ = nullptr;
};

}  // namespace

TEST_F(WorkerTest, DisjointSlicesOnTwoChipsRunConcurrentlyAndAReaderWaitsForBoth) {
    Worker w(config(2));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs left = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, MEET, 0, 0);
    TaskArgs right = task({{cols(x, 8), TensorArgType::OUTPUT_EXISTING}}, MEET, 0, 1);
    TaskArgs reader = task({{cols(x, 0, 16), TensorArgType::INPUT}}, SLEEP, 1, 2);
    chip_task(w, left, 0);
    chip_task(w, right, 1);
    chip_task(w, reader, 0);
    w.wait();  // throws unless the two disjoint column blocks met (ran at the same time)
    EXPECT_GE(tl_->start_us[2].load(), tl_->end_us[0].load());
    EXPECT_GE(tl_->start_us[2].load(), tl_->end_us[1].load());
    w.close();
}

TEST_F(WorkerTest, AFailingTaskFailsWaitAndItsSuccessorsNeverRun) {
    Worker w(config(1));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs bad = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, FAIL, 0, 3);
    TaskArgs after = task({{cols(x, 0), TensorArgType::INPUT}}, SLEEP, 1, 4);
    chip_task(w, bad, 0);
    chip_task(w, after, 0);
    try {
        w.wait();
        FAIL() << "wait() must raise the failure";
    } catch (const RunError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("task 1"), std::string::npos) << msg;
        EXPECT_NE(msg.find("on chip 0"), std::string::npos) << msg;
        EXPECT_NE(msg.find("kernel failed on purpose (slot 3)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("1 dependent task(s) were not run"), std::string::npos) << msg;
    }
    EXPECT_EQ(tl_->start_us[4].load(), 0) << "a poisoned successor ran";
    // The Worker is still usable.
    TaskArgs again = task({{cols(x, 0), TensorArgType::INPUT}}, SLEEP, 1, 5);
    chip_task(w, again, 0);
    w.wait();
    EXPECT_GT(tl_->end_us[5].load(), 0);
}

TEST_F(WorkerTest, AChildKilledMidTaskIsAnErrorAndTheRestStaysUsable) {
    Worker w(config(2));
    w.init();
    const std::vector<pid_t> pids = w.child_pids();
    const BufferDescriptor x = buffer(1), y = buffer(2);
    TaskArgs doomed = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, KILL_SELF, 0, 6);
    chip_task(w, doomed, 0);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        w.wait();
        FAIL() << "a SIGKILLed child must fail the run";
    } catch (const RunError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("CHILD_DIED"), std::string::npos) << msg;
        EXPECT_NE(msg.find("signal 9"), std::string::npos) << msg;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 60s);  // a hang guard, not a speed check
    EXPECT_NE(w.child_status()[0].find("lost"), std::string::npos);
    EXPECT_THROW(chip_task(w, doomed, 0), std::invalid_argument);
    TaskArgs fine = task({{cols(y, 0), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 1, 7);
    chip_task(w, fine, 1);
    w.wait();
    EXPECT_GT(tl_->end_us[7].load(), 0);
    // The progress snapshot counts both tasks, each on its chip, and the loss.
    const WorkerProgress p = w.progress();
    EXPECT_EQ(p.submitted, 2U);
    EXPECT_EQ(p.unfinished, 0U);
    EXPECT_EQ(p.lost, 1U);
    EXPECT_EQ(w.lost_count(), 1U);
    ASSERT_EQ(p.children.size(), 2U);
    EXPECT_EQ(p.children[0].name, "chip 0");
    EXPECT_TRUE(p.children[0].lost);
    EXPECT_EQ(p.children[0].done, 1U);  // the killed task came back as CHILD_DIED
    EXPECT_FALSE(p.children[1].lost);
    EXPECT_EQ(p.children[1].done, 1U);
    EXPECT_FALSE(p.children[0].running || p.children[1].running);
    w.close();
    for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << "child " << pid << " outlived close()";
}

TEST_F(WorkerTest, AHungTaskTimesOutInsteadOfHanging) {
    WorkerConfig c = config(1);
    c.task_timeout = 300ms;
    Worker w(std::move(c));
    w.init();
    TaskArgs hang = task({{cols(buffer(1), 0), TensorArgType::OUTPUT_EXISTING}}, HANG, 0, 8);
    chip_task(w, hang, 0);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        w.wait();
        FAIL();
    } catch (const RunError& e) {
        EXPECT_NE(std::string(e.what()).find("TIMED_OUT"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 60s);  // a hang guard, not a speed check
    w.close();
}

TEST_F(WorkerTest, SubWorkersTakeTasksAndCloseLeavesNoChild) {
    Worker w(config(0, 2));
    w.init();
    const std::vector<pid_t> pids = w.child_pids();
    const BufferDescriptor x = buffer(1);
    TaskArgs a = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, MEET, 0, 9);
    TaskArgs b = task({{cols(x, 8), TensorArgType::OUTPUT_EXISTING}}, MEET, 0, 10);
    MemberSubmit ma{&a, std::nullopt}, mb{&b, std::nullopt};
    w.submit(TaskKind::SUB, 2, {&ma, 1}, TaskConfig{});
    w.submit(TaskKind::SUB, 2, {&mb, 1}, TaskConfig{});
    w.wait();  // throws unless the two sub tasks met on the two sub-workers
    w.close();
    w.close();  // idempotent
    for (pid_t p : pids) EXPECT_FALSE(alive(p));
    EXPECT_THROW(w.submit(TaskKind::SUB, 2, {&ma, 1}, TaskConfig{}), std::logic_error);
}

TEST_F(WorkerTest, AnIdleWorkerSleeps) {
    Worker w(config(2, 2));
    w.init();
    TaskArgs warm = task({{cols(buffer(1), 0), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 1, 11);
    chip_task(w, warm, 0);
    w.wait();
    const ipc::TreeCpuUsage use = ipc::measure_tree_cpu(getpid(), 2000ms);
    EXPECT_GE(use.processes, 5u);
    EXPECT_LT(use.core_fraction(), 0.02) << "an idle Worker used " << use.cpu_seconds << " s of CPU in "
                                         << use.wall_seconds << " s";
    w.close();
}

TEST_F(WorkerTest, CloseFromAnotherThreadEndsAWaitNamingWhatDidNotFinish) {
    Worker w(config(1));
    w.init();
    const std::vector<pid_t> pids = w.child_pids();
    TaskArgs hang = task({{cols(buffer(1), 0), TensorArgType::OUTPUT_EXISTING}}, HANG, 0, 12);
    chip_task(w, hang, 0);
    std::thread closer([&] {
        while (tl_->start_us[12].load() == 0) std::this_thread::sleep_for(1ms);
        w.close();
    });
    try {
        w.wait();
        ADD_FAILURE() << "wait() must raise when the Worker is closed under it";
    } catch (const RunError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("the Worker was closed while the run waited"), std::string::npos) << msg;
        EXPECT_NE(msg.find("task 1 of run 0 (callable 1, member 0) on chip 0"), std::string::npos) << msg;
    }
    closer.join();
    w.close();  // returns with the children gone, whoever closed first
    for (pid_t p : pids) EXPECT_FALSE(alive(p));
}

TEST_F(WorkerTest, AWaitWithADeadlineReturnsAndCancelRunCancelsWhatWasNotDispatched) {
    Worker w(config(1));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs hang = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, HANG, 0, 13);
    TaskArgs after = task({{cols(x, 0), TensorArgType::INPUT}}, SLEEP, 1, 14);
    chip_task(w, hang, 0);
    chip_task(w, after, 0);
    EXPECT_FALSE(w.wait_until(ipc::Clock::now() + 10ms));
    const std::string what = w.cancel_run("interrupted by the test");
    EXPECT_NE(what.find("1 task(s) not yet started were cancelled"), std::string::npos) << what;
    EXPECT_NE(what.find("task 1 of run 0 (callable 1, member 0) on chip 0"), std::string::npos) << what;
    EXPECT_FALSE(w.wait_until(ipc::Clock::now() + 10ms)) << "the task on the chip still runs";
    w.close();
    EXPECT_EQ(tl_->start_us[14].load(), 0) << "a cancelled task ran";
}

TEST_F(WorkerTest, CancelRunWithdrawsAChainedTaskItsChipHasNotStarted) {
    Worker w(config(1));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs gate = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, GATE, 0, 15);
    TaskArgs after = task({{cols(x, 0), TensorArgType::INPUT}}, SLEEP, 1, 16);
    chip_task(w, gate, 0);
    chip_task(w, after, 0);  // chained behind the gate on chip 0's lane
    EXPECT_FALSE(w.wait_until(ipc::Clock::now() + 10ms));
    const std::string what = w.cancel_run("interrupted by the test");
    EXPECT_NE(what.find("1 task(s) not yet started were cancelled"), std::string::npos) << what;
    tl_->open = true;
    EXPECT_TRUE(w.wait_until(ipc::Clock::now() + 20s)) << "the gate task did not finish";
    w.close();
    EXPECT_NE(tl_->end_us[15].load(), 0) << "the running task was not let finish";
    EXPECT_EQ(tl_->start_us[16].load(), 0) << "the chip ran a cancelled chained task";
}

TEST_F(WorkerTest, RunsInFlightFinishEachOnItsOwnAndCloseEndsTheRest) {
    Worker w(config(2));
    w.init();
    TaskArgs hang = task({{cols(buffer(1), 0), TensorArgType::OUTPUT_EXISTING}}, HANG, 0, 20);
    TaskArgs quick = task({{cols(buffer(2), 0), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 1, 21);
    chip_task(w, hang, 0);
    EXPECT_EQ(w.end_run(true), 0u);
    chip_task(w, quick, 1);
    EXPECT_EQ(w.end_run(true), 1u);
    // Run 1 finishes while run 0 is still on its chip.
    Worker::FinishedRuns first = w.take_finished_runs(ipc::Clock::now() + 20s);
    ASSERT_EQ(first.runs.size(), 1u);
    EXPECT_EQ(first.runs[0].run, 1u);
    EXPECT_FALSE(first.runs[0].failure);
    EXPECT_FALSE(first.closed);
    EXPECT_TRUE(w.take_finished_runs(ipc::Clock::now() + 10ms).runs.empty());
    EXPECT_THROW((void)w.wait_run(1, ipc::NO_DEADLINE), std::logic_error);  // reported already
    w.close();
    Worker::FinishedRuns rest = w.take_finished_runs(ipc::NO_DEADLINE);
    EXPECT_TRUE(rest.closed);
    ASSERT_EQ(rest.runs.size(), 1u);
    EXPECT_EQ(rest.runs[0].run, 0u);
    ASSERT_TRUE(rest.runs[0].failure);
    const std::string error = rest.runs[0].failure->render();
    EXPECT_EQ(rest.runs[0].failure->levels.front().code, FailureCode::CLOSED);
    EXPECT_NE(error.find("the Worker was closed while the run waited; these had not finished and never "
                         "will: task 1 of run 0 (callable 1, member 0) on chip 0"),
              std::string::npos)
        << error;
}

TEST_F(WorkerTest, EachRunReportsItsOwnFailureAndAPoisonedTaskNamesTheOtherRunsCause) {
    Worker w(config(2));
    w.init();
    const BufferDescriptor x = buffer(1);
    TaskArgs fail = task({{cols(x, 0), TensorArgType::OUTPUT_EXISTING}}, FAIL, 0, 22);
    TaskArgs reader = task({{cols(x, 0), TensorArgType::INPUT}}, SLEEP, 1, 23);
    TaskArgs other = task({{cols(buffer(2), 0), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 1, 24);
    chip_task(w, fail, 0);
    const uint64_t failing = w.end_run(false);
    chip_task(w, reader, 1);
    chip_task(w, other, 1);
    const uint64_t poisoned = w.end_run(false);
    try {
        (void)w.wait_run(poisoned, ipc::NO_DEADLINE);
        ADD_FAILURE() << "run 1 lost a task and must fail";
    } catch (const RunError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("task 2 of run 1 (callable 1, member 0) was not run: it needs what task 1 of run 0 "
                           "(callable 1, member 0) on chip 0 failed: TASK_FAILED: kernel failed on purpose"),
                  std::string::npos)
            << msg;
    }
    EXPECT_NE(tl_->end_us[24].load(), 0) << "the run's independent task ran";
    try {
        (void)w.wait_run(failing, ipc::NO_DEADLINE);
        ADD_FAILURE() << "run 0's task failed";
    } catch (const RunError& e) {
        EXPECT_EQ(std::string(e.what()).find("task 1 of run 0 (callable 1, member 0) on chip 0 failed"), 0u)
            << e.what();
    }
    EXPECT_EQ(tl_->start_us[23].load(), 0) << "a poisoned task ran";
    w.close();
}

TEST_F(WorkerTest, SubmitManyRecordsEachTaskAsOneSubmitOrNoneWhenOneIsRefused) {
    WorkerConfig c = config(2);
    c.record_edges = true;
    Worker w(std::move(c));
    w.init();
    const BufferDescriptor b = buffer(1);
    // Columns 0-3 written by task 0, read by task 1; task 2 writes 8-11 (independent).
    const TaskArgs t0 = task({{cols(b, 0), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 0, 0);
    const TaskArgs t1 = task({{cols(b, 0), TensorArgType::INPUT}}, SLEEP, 0, 1);
    const TaskArgs t2 = task({{cols(b, 8), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 0, 2);
    const MemberSubmit batch[] = {{&t0, 0u}, {&t1, 1u}, {&t2, 0u}};
    TaskHandles out;
    EXPECT_FALSE(w.submit_many(TaskKind::NEXT_LEVEL, 1, batch, TaskConfig{}, out).has_value());
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].id, 1u);
    EXPECT_EQ(out[1].id, out[0].id + 1);
    EXPECT_EQ(out[2].id, out[0].id + 2);
    EXPECT_EQ(out[2].run, 0u);  // the Worker's first run
    const EdgeLog log = w.take_edge_log();
    EXPECT_EQ(log.dropped, 0u);
    const std::vector<EdgeExplanation>& edges = log.edges;
    ASSERT_EQ(edges.size(), 1u);
    EXPECT_EQ(edges[0].predecessor, out[0].id);
    EXPECT_EQ(edges[0].successor, out[1].id);

    // Task 1 of this batch names chip 7: none of the batch is recorded.
    const MemberSubmit bad[] = {{&t2, 1u}, {&t0, 7u}, {&t1, 0u}};
    out = TaskHandles{};
    const std::optional<Worker::BatchRefusal> refused = w.submit_many(TaskKind::NEXT_LEVEL, 1, bad, TaskConfig{}, out);
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->index, 1u);
    EXPECT_NE(refused->why.find("submit of task 5 refused"), std::string::npos) << refused->why;
    EXPECT_NE(refused->why.find("worker=7"), std::string::npos) << refused->why;
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(w.progress().submitted, 3u);
    // A batch refused for an overlapping write within its last task: none recorded either.
    const TaskArgs overlap =
        task({{cols(b, 0), TensorArgType::OUTPUT_EXISTING}, {cols(b, 2), TensorArgType::INOUT}}, SLEEP, 0, 3);
    const MemberSubmit last[] = {{&t2, 1u}, {&overlap, 0u}};
    const std::optional<Worker::BatchRefusal> again = w.submit_many(TaskKind::NEXT_LEVEL, 1, last, TaskConfig{}, out);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->index, 1u);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(w.progress().submitted, 3u);
    const TaskArgs after = task({{cols(b, 12), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 0, 4);
    const MemberSubmit next[] = {{&after, 0u}};
    EXPECT_FALSE(w.submit_many(TaskKind::NEXT_LEVEL, 1, next, TaskConfig{}, out).has_value());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 4u);  // the refused batches used no ids
    w.wait();
    // The next run's batch: its handles carry run 1.
    const TaskArgs later = task({{cols(b, 4), TensorArgType::OUTPUT_EXISTING}}, SLEEP, 0, 5);
    const MemberSubmit again_next[] = {{&later, 1u}, {&after, 0u}};
    EXPECT_FALSE(w.submit_many(TaskKind::NEXT_LEVEL, 1, again_next, TaskConfig{}, out).has_value());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].id, 5u);
    EXPECT_EQ(out[1].id, 6u);
    EXPECT_EQ(out[1].run, 1u);
    w.wait();
    w.close();
}

TEST_F(WorkerTest, MaxUnfinishedMakesASubmitWaitForRoomAndEveryTaskStillRuns) {
    Worker w(bounded(3));
    w.init();
    TaskArgs gate = task({}, GATE, 0, 0);
    chip_task(w, gate, 0);
    std::atomic<uint64_t> most_unfinished{0};
    std::thread submitter([&] {
        for (uint64_t slot = 1; slot < 10; ++slot) {
            const TaskArgs t = task({}, SLEEP, 0, slot);
            chip_task(w, t, 0);
            const uint64_t now = w.progress().unfinished;
            if (now > most_unfinished.load()) most_unfinished = now;
        }
    });
    // The gate holds: the submitter gets two tasks in beside it, then waits for room.
    while (w.progress().submitted < 3) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);  // time for a submit that did not wait to go in (it must not)
    EXPECT_EQ(w.progress().submitted, 3u);
    EXPECT_EQ(w.room(), 0u);
    tl_->open = true;
    submitter.join();
    w.wait();
    EXPECT_LE(most_unfinished.load(), 3u);
    EXPECT_EQ(w.progress().submitted, 10u);
    for (int slot = 0; slot < 10; ++slot) EXPECT_NE(tl_->end_us[slot].load(), 0) << "slot " << slot;
    w.close();
}

TEST_F(WorkerTest, CloseEndsASubmitWaitingForRoom) {
    Worker w(bounded(1));
    w.init();
    TaskArgs hang = task({}, HANG, 0, 13);
    chip_task(w, hang, 0);
    std::atomic<bool> submitting{false};
    std::string refused;
    std::thread submitter([&] {
        const TaskArgs t = task({}, SLEEP, 0, 14);
        submitting = true;
        try {
            chip_task(w, t, 0);
        } catch (const std::logic_error& e) {
            refused = e.what();
        }
    });
    while (!submitting.load() || tl_->start_us[13].load() == 0) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);  // let the submit reach its wait (closing first refuses it too)
    w.close();
    submitter.join();
    EXPECT_NE(refused.find("Worker.submit: the Worker"), std::string::npos) << refused;
    EXPECT_NE(refused.find("closed"), std::string::npos) << refused;
    EXPECT_EQ(tl_->start_us[14].load(), 0) << "the waiting task ran";
}
