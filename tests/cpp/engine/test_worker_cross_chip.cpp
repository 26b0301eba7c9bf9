// Worker, with real forked chip children, a dependency between chips without
// the parent in the loop (WorkerConfig::chip_conditions): the consumer of a
// producer still running on another chip is on its own chip's lane at once and
// starts only after the producer finished (its trace event names the producer); a failed producer, a producer chip
// SIGKILLed while the consumer waits, and a cancel each end as they do with the
// dependency kept in the parent (the same report); a consumer behind a long
// task still runs after the producer's lane completed more tasks than its board
// keeps outcomes of; its task_timeout counts from when its producer is collected;
// one held behind a forget on its own lane while its producer finished runs
// once the forget is answered, or not at all when that producer failed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t SLOTS = 128;

// Shared with the children (MAP_SHARED before fork).
struct Shared {
    std::atomic<uint64_t> order;          // bumped as each task starts and ends
    std::atomic<uint64_t> started[SLOTS];  // `order` when slot's task started (0: never)
    std::atomic<uint64_t> ended[SLOTS];
    std::atomic<bool> open[2];             // GATE k may finish
    std::atomic<uint32_t> forgets[2];       // forget messages chip i answered
    std::atomic<bool> in_forget0;           // chip 0 is in a forget (it waits for gate 0 there)
};

enum Op : uint64_t { RUN = 0, FAIL = 1, GATE = 2, NAP = 3 };

// scalars: [op, slot, gate] (NAP: gate is milliseconds to sleep)
ipc::TaskHandler make_handler(Shared* s) {
    return [s](const ipc::TaskView& task) -> ipc::TaskOutcome {
        DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
        const uint64_t op = args.scalars.at(0), slot = args.scalars.at(1), gate = args.scalars.at(2);
        s->started[slot] = s->order.fetch_add(1) + 1;
        if (op == FAIL)
            return {ipc::TaskError::TASK_FAILED, "kernel failed on purpose (slot " + std::to_string(slot) + ")"};
        if (op == NAP) std::this_thread::sleep_for(std::chrono::milliseconds(gate));
        if (op == GATE) {
            const auto give_up = std::chrono::steady_clock::now() + 20s;
            while (!s->open[gate].load()) {
                if (std::chrono::steady_clock::now() > give_up)
                    return {ipc::TaskError::TASK_FAILED, "slot " + std::to_string(slot) + ": the gate never opened"};
                std::this_thread::sleep_for(1ms);
            }
        }
        s->ended[slot] = s->order.fetch_add(1) + 1;
        return {};
    };
}

// Chip 0's forgets wait for gate 0; chip 1's answer at once.
ChildHandlers with_forgets(Shared* s, uint32_t chip) {
    return ChildHandlers{make_handler(s), [s, chip](std::span<const CanonicalIdentity>) {
                             if (chip == 0) {
                                 s->in_forget0 = true;
                                 const auto give_up = std::chrono::steady_clock::now() + 20s;
                                 while (!s->open[0].load() && std::chrono::steady_clock::now() < give_up)
                                     std::this_thread::sleep_for(1ms);
                             }
                             ++s->forgets[chip];
                         }};
}

BufferDescriptor buffer(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x35, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    const uint8_t name[] = "spcross";
    return make_buffer_descriptor(c, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 64, {name, 7});
}

Tensor whole(uint64_t id) {
    const uint32_t shape[] = {64};
    return make_tensor(buffer(id), shape, DataType::UINT8);
}

// Reads buffers `from`, writes buffer `to`.
TaskArgs task(std::initializer_list<uint64_t> from, uint64_t to, Op op, uint64_t slot, uint64_t gate = 0) {
    TaskArgs a;
    for (uint64_t f : from) a.add_tensor(whole(f), TensorArgType::INPUT);
    a.add_tensor(whole(to), TensorArgType::OUTPUT_EXISTING);
    a.add_scalar(op);
    a.add_scalar(slot);
    a.add_scalar(gate);
    return a;
}

class CrossChipTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        s_ = new (p) Shared{};
    }
    void TearDown() override { munmap(s_, sizeof(Shared)); }
    void reset() { new (s_) Shared{}; }  // between Workers: their children are gone

    // Two chips; chips wait on each other's lanes unless `chip_conditions` is false.
    WorkerConfig config(bool chip_conditions = true) {
        WorkerConfig c;
        c.num_chips = 2;
        c.chip_handler = [s = s_](uint32_t) { return make_handler(s); };
        c.close_grace = 500ms;
        c.chip_conditions = chip_conditions;
        return c;
    }
    static TaskId on(Worker& w, const TaskArgs& a, uint32_t chip) {
        MemberSubmit m{&a, chip};
        return w.submit(TaskKind::NEXT_LEVEL, 1, {&m, 1}, TaskConfig{}).id;
    }
    // wait()'s RunError text ("" when it returned).
    static std::string failure(Worker& w) {
        try {
            w.wait();
        } catch (const RunError& e) {
            return e.what();
        }
        return {};
    }

    Shared* s_ = nullptr;
};

}  // namespace

TEST_F(CrossChipTest, TheConsumerWaitsOnItsOwnChipAndStartsAfterItsProducerEnded) {
    for (const bool across : {true, false}) {
        reset();
        WorkerConfig c = config(across);
        c.trace = true;
        Worker w(c);
        w.init();
        const TaskArgs produce = task({}, 1, GATE, 0), consume = task({1}, 2, RUN, 1);
        const TaskId producer = on(w, produce, 1);
        const TaskId consumer = on(w, consume, 0);
        // Published ahead: on chip 0's lane while its producer still runs on chip 1 (not without conditions).
        EXPECT_EQ(w.progress().children.at(0).running, across);
        std::this_thread::sleep_for(20ms);
        EXPECT_EQ(s_->started[1].load(), 0u) << "the consumer started before its producer ended";
        s_->open[0] = true;
        w.wait();
        EXPECT_GT(s_->started[1].load(), s_->ended[0].load());
        // The trace shows the wait as the edge it is.
        for (const TraceEvent& e : w.trace_events()) {
            if (e.phase != TracePhase::RUN) continue;
            const std::vector<TaskId> want =
                across && e.task.id == consumer ? std::vector<TaskId>{producer} : std::vector<TaskId>{};
            EXPECT_EQ(e.waits_on, want) << e.task.name();
        }
        w.close();
    }
}

TEST_F(CrossChipTest, AFailedProducerFailsTheRunAsItDoesThroughTheParent) {
    std::string reports[2];
    for (const bool across : {true, false}) {
        reset();
        Worker w(config(across));
        w.init();
        const TaskArgs gate = task({}, 9, GATE, 0), produce = task({}, 1, FAIL, 1), consume = task({1}, 2, RUN, 2),
                       after = task({2}, 3, RUN, 3);
        on(w, gate, 1);
        on(w, produce, 1);  // behind the gate: still in flight when its consumers are submitted
        on(w, consume, 0);
        on(w, after, 1);
        s_->open[0] = true;
        reports[across ? 0 : 1] = failure(w);
        EXPECT_EQ(s_->started[2].load(), 0u) << "the consumer of a failed producer ran";
        EXPECT_EQ(s_->started[3].load(), 0u) << "its successor ran";
        // The Worker stays usable on both chips.
        const TaskArgs again0 = task({3}, 4, RUN, 4), again1 = task({4}, 5, RUN, 5);
        on(w, again0, 0);
        on(w, again1, 1);
        w.wait();
        EXPECT_GT(s_->started[5].load(), s_->ended[4].load());
        w.close();
    }
    EXPECT_NE(reports[0].find("task 2 of run 0"), std::string::npos) << reports[0];
    EXPECT_NE(reports[0].find("kernel failed on purpose (slot 1)"), std::string::npos) << reports[0];
    EXPECT_NE(reports[0].find("2 dependent task(s) were not run"), std::string::npos) << reports[0];
    EXPECT_EQ(reports[0], reports[1]);
}

TEST_F(CrossChipTest, AProducerChipKilledWhileItsConsumerWaitsIsAClearErrorNotAHang) {
    Worker w(config());
    w.init();
    const std::vector<pid_t> pids = w.child_pids();
    const TaskArgs produce = task({}, 1, GATE, 0), consume = task({1}, 2, RUN, 1);
    on(w, produce, 1);
    on(w, consume, 0);
    ASSERT_TRUE(w.progress().children.at(0).running);  // waiting on chip 0 for chip 1
    ASSERT_EQ(kill(pids.at(1), SIGKILL), 0);
    const std::string report = failure(w);
    EXPECT_NE(report.find("CHILD_DIED"), std::string::npos) << report;
    EXPECT_NE(report.find("chip 1"), std::string::npos) << report;
    EXPECT_NE(report.find("1 dependent task(s) were not run"), std::string::npos) << report;
    EXPECT_EQ(s_->started[1].load(), 0u) << "the consumer of a lost producer ran";
    // Chip 0 was never lost: it still runs work.
    const TaskArgs again = task({}, 3, RUN, 2);
    on(w, again, 0);
    w.wait();
    EXPECT_GT(s_->ended[2].load(), 0u);
    w.close();
}

TEST_F(CrossChipTest, ACancelWithdrawsAConsumerWaitingForAnotherChip) {
    Worker w(config());
    w.init();
    const TaskArgs produce = task({}, 1, GATE, 0), consume = task({1}, 2, RUN, 1);
    on(w, produce, 1);
    on(w, consume, 0);
    ASSERT_TRUE(w.progress().children.at(0).running);
    const std::string what = w.cancel_run("interrupted by the test");
    EXPECT_NE(what.find("1 task(s) not yet started were cancelled"), std::string::npos) << what;
    s_->open[0] = true;
    EXPECT_TRUE(w.wait_until(ipc::Clock::now() + 20s)) << "the producer did not finish";
    w.close();
    EXPECT_GT(s_->ended[0].load(), 0u) << "the running producer was not let finish";
    EXPECT_EQ(s_->started[1].load(), 0u) << "a cancelled consumer ran";
}

TEST_F(CrossChipTest, AConsumerBehindALongTaskRunsAfterItsProducersLaneMovedFarOn) {
    Worker w(config());
    w.init();
    // The producer on chip 1 is in flight (gate 1) when its consumer goes to chip 0, behind a task held by gate 0.
    const TaskArgs produce = task({}, 1, GATE, 0, 1), hold = task({}, 9, GATE, 1, 0), consume = task({1}, 2, RUN, 2);
    on(w, produce, 1);
    on(w, hold, 0);
    on(w, consume, 0);
    s_->open[1] = true;
    // More tasks on chip 1 than the board keeps outcomes of (ipc::OUTCOME_WINDOW) complete meanwhile.
    std::vector<TaskArgs> more;
    for (uint64_t k = 0; k < ipc::OUTCOME_WINDOW + 8; ++k) more.push_back(task({}, 100 + k, RUN, 3 + k % 100));
    for (const TaskArgs& a : more) on(w, a, 1);
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (w.progress().children.at(1).done < ipc::OUTCOME_WINDOW + 9 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(w.progress().children.at(1).done, ipc::OUTCOME_WINDOW + 9);
    EXPECT_EQ(s_->started[2].load(), 0u);
    s_->open[0] = true;
    w.wait();  // its producer succeeded: it runs, though the board no longer keeps that outcome
    EXPECT_GT(s_->started[2].load(), s_->ended[1].load());
    w.close();
}

TEST_F(CrossChipTest, AConsumersTimeoutCountsFromWhenItsProducersAreCollected) {
    WorkerConfig c = config();
    c.task_timeout = 1500ms;
    Worker w(c);
    w.init();
    // Chip 0's consumer waits (first on its lane) for the second of two 1 s tasks on chip 1: 2 s, past its
    // 1.5 s timeout, which counts only from when its producer is collected.
    const TaskArgs first = task({}, 1, NAP, 0, 1000), produce = task({}, 2, NAP, 1, 1000),
                   consume = task({2}, 3, RUN, 2);
    on(w, first, 1);
    on(w, produce, 1);
    on(w, consume, 0);
    ASSERT_TRUE(w.progress().children.at(0).running);  // waiting on chip 0, not in the parent
    w.wait();
    EXPECT_GT(s_->started[2].load(), s_->ended[1].load());
    EXPECT_EQ(w.progress().lost, 0u);
    w.close();
}

TEST_F(CrossChipTest, AConsumerHeldBehindAForgetOnItsLaneRunsAfterItsProducerWasCollectedOrNotWhenItFailed) {
    for (const bool producer_fails : {false, true}) {
        reset();
        WorkerConfig c = config();
        c.chip_handler = [s = s_](uint32_t chip) { return with_forgets(s, chip); };
        Worker w(c);
        w.init();
        CanonicalIdentity forgotten{};
        forgotten.buffer_id = 99;
        w.forget({&forgotten, 1});  // both chips are idle: chip 1 answers, chip 0 waits in it for gate 0
        // A task on chip 1 goes once its forget is answered: after it, chip 1's lane is open.
        const TaskArgs first = task({}, 50, RUN, 3);
        on(w, first, 1);
        w.wait();
        const auto give_up = std::chrono::steady_clock::now() + 20s;
        while (!s_->in_forget0.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
        ASSERT_TRUE(s_->in_forget0.load() && s_->forgets[1].load() == 1);
        const TaskArgs produce = task({}, 1, producer_fails ? FAIL : GATE, 0, 1), consume = task({1}, 2, RUN, 1);
        on(w, produce, 1);
        ASSERT_TRUE(w.progress().children.at(1).running || producer_fails);
        on(w, consume, 0);  // waits for chip 1's task, held here behind chip 0's forget
        EXPECT_FALSE(w.progress().children.at(0).running);
        s_->open[1] = true;
        while (w.progress().children.at(1).done < 2 && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(1ms);
        ASSERT_EQ(w.progress().children.at(1).done, 2u);  // the producer's result is collected
        s_->open[0] = true;                                // the forget is answered: the consumer goes
        const std::string report = failure(w);
        if (producer_fails) {
            EXPECT_NE(report.find("kernel failed on purpose (slot 0)"), std::string::npos) << report;
            EXPECT_EQ(s_->started[1].load(), 0u) << "the consumer of a failed producer ran";
        } else {
            EXPECT_EQ(report, "");
            EXPECT_GT(s_->started[1].load(), s_->ended[0].load());
        }
        w.close();
    }
}
