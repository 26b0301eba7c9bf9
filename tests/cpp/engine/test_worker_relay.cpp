// Worker relay lanes (WorkerConfig::num_relay_workers): the last next-level
// children are served by a thread of this process with the RelayLane's
// handlers instead of a forked process. Tasks reach a forked child and a relay
// side by side; a relay whose lost() starts answering fails the task it was
// running with the handler's outcome, then loses the lane with its text, so
// later tasks there are not dispatched; child_pids() lists only forked
// children; close() joins the relay thread, which destroys the handlers; and
// the config refuses more relays than Workers or relays without a factory.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_fixtures.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

// Scalars of every task: op, slot, value.
enum Op : uint64_t { WRITE = 0, LOSE = 1 };

// Written by the forked child (MAP_SHARED) and by the relay (the same process).
struct Slots {
    std::atomic<uint64_t> value[4];
};

// What the relay's handlers hold: its destructor says where it ran.
struct RelayState {
    Slots* slots = nullptr;
    std::atomic<bool>* lose = nullptr;
    std::atomic<bool>* destroyed = nullptr;
    std::thread::id* destroyed_on = nullptr;
    ~RelayState() {
        *destroyed_on = std::this_thread::get_id();
        destroyed->store(true);
    }
};

ipc::TaskOutcome write_slot(Slots* slots, const ipc::TaskView& task) {
    const DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
    slots->value[args.scalars.at(1)].store(args.scalars.at(2));
    return {};
}

using engine_test::alive;

class RelayWorkerTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Slots), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        slots_ = new (p) Slots{};
    }
    void TearDown() override {
        munmap(slots_, sizeof(Slots));
        errno = 0;
        EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child process is left unreaped";
        EXPECT_EQ(errno, ECHILD);
    }

    // Child 0: a forked next-level handler; child 1: a relay lane.
    WorkerConfig config() {
        WorkerConfig c;
        c.num_workers = 2;
        c.num_relay_workers = 1;
        c.worker_handler = [slots = slots_](uint32_t) -> ChildHandlers {
            return [slots](const ipc::TaskView& task) { return write_slot(slots, task); };
        };
        c.relay_handler = [this](uint32_t index) {
            factory_index_ = index;
            auto state = std::make_shared<RelayState>();
            state->slots = slots_;
            state->lose = &lose_;
            state->destroyed = &destroyed_;
            state->destroyed_on = &destroyed_on_;
            RelayLane lane;
            lane.handlers = ChildHandlers([state](const ipc::TaskView& task) -> ipc::TaskOutcome {
                const DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
                if (args.scalars.at(0) == LOSE) {
                    state->lose->store(true);
                    if (args.scalars.at(2) == 1) return {};  // the result got back, then the link dropped
                    return {ipc::TaskError::TASK_FAILED, "the link to the remote L3 dropped mid-task"};
                }
                return write_slot(state->slots, task);
            });
            lane.lost = [lose = &lose_, gate = &gate_]() -> std::string {
                if (!lose->load()) return "";
                // Held until the test opens the gate (a hang guard bounds it).
                const auto until = std::chrono::steady_clock::now() + 30s;
                while (!gate->load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
                return "remote L3 on host b: no heartbeat for 3 s";
            };
            return lane;
        };
        c.worker_callable_names = {"job"};
        c.close_grace = 2s;
        return c;
    }
    static TaskArgs task(Op op, uint64_t slot, uint64_t value) {
        TaskArgs a;
        a.add_scalar(op);
        a.add_scalar(slot);
        a.add_scalar(value);
        return a;
    }
    static void submit(Worker& w, uint32_t child, Op op, uint64_t slot, uint64_t value) {
        TaskArgs a = task(op, slot, value);
        const MemberSubmit m{&a, child};
        w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
    }
    static std::string wait_failure(Worker& w) {
        try {
            w.wait();
        } catch (const RunError& e) {
            return e.what();
        }
        return "(wait() did not throw)";
    }

    void expect_refused_on_lost_relay(Worker& w) {
        try {
            submit(w, 1, WRITE, 3, 5);
            FAIL() << "a task for a lost relay was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(
                          "refused: worker=1 is lost (worker 1 remote L3 on host b: no heartbeat for 3 s)"),
                      std::string::npos)
                << e.what();
        }
        EXPECT_EQ(slots_->value[3].load(), 0u);
    }

    Slots* slots_ = nullptr;
    std::atomic<bool> lose_{false};
    std::atomic<bool> gate_{true};  // lost() answers at once unless a test closes it
    std::atomic<bool> destroyed_{false};
    std::thread::id destroyed_on_{};
    uint32_t factory_index_ = 99;
};

TEST(RelayWorkerConfig, MoreRelaysThanWorkersAreRefused) {
    WorkerConfig c;
    c.num_workers = 1;
    c.num_relay_workers = 2;
    c.relay_handler = [](uint32_t) { return RelayLane{}; };
    try {
        c.validate();
        FAIL() << "accepted 2 relays of 1 Worker";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "WorkerConfig.num_relay_workers: at most num_workers (got 2 of 1 Workers)");
    }
    EXPECT_THROW(Worker{c}, std::invalid_argument);
}

TEST(RelayWorkerConfig, ARelayFactoryIsRequiredAndAWorkerHandlerOnlyForForkedWorkers) {
    WorkerConfig c;
    c.num_workers = 1;
    c.num_relay_workers = 1;
    try {
        Worker w{c};
        FAIL() << "accepted a relay lane without relay_handler";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "WorkerConfig.relay_handler: required when num_relay_workers > 0");
    }
    // Every Worker a relay: no worker_handler is needed.
    c.relay_handler = [](uint32_t) { return RelayLane{}; };
    EXPECT_NO_THROW(Worker{c});
    // One forked Worker besides: then it is.
    c.num_workers = 2;
    try {
        Worker w{c};
        FAIL() << "accepted a forked Worker without worker_handler";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "WorkerConfig.worker_handler: required when num_workers > 0");
    }
}

TEST_F(RelayWorkerTest, TasksRunOnTheForkedChildAndOnTheRelay) {
    Worker w(config());
    w.init();
    EXPECT_EQ(factory_index_, 1u);  // the relay is the last next-level child
    const std::vector<pid_t> pids = w.child_pids();
    ASSERT_EQ(pids.size(), 1u);  // the relay lane has no process
    EXPECT_NE(pids[0], getpid());
    for (uint64_t round = 1; round <= 3; ++round) {
        submit(w, 0, WRITE, 0, 100 + round);
        submit(w, 1, WRITE, 1, 200 + round);
        w.wait();
        EXPECT_EQ(slots_->value[0].load(), 100 + round);
        EXPECT_EQ(slots_->value[1].load(), 200 + round);
    }
    EXPECT_EQ(w.child_status(), (std::vector<std::string>{"worker 0: usable", "worker 1: usable"}));
    EXPECT_FALSE(destroyed_.load());
    w.close();
    for (pid_t p : pids) EXPECT_FALSE(alive(p)) << "pid " << p << " outlived close()";
}

TEST_F(RelayWorkerTest, CloseJoinsTheRelayThreadWhichDestroysTheHandlers) {
    {
        Worker w(config());
        w.init();
        submit(w, 1, WRITE, 2, 7);
        w.wait();
        EXPECT_EQ(slots_->value[2].load(), 7u);
        EXPECT_FALSE(destroyed_.load()) << "the relay's handlers went before close()";
        w.close();
        EXPECT_TRUE(destroyed_.load()) << "close() returned before the relay's handlers were destroyed";
        EXPECT_NE(destroyed_on_, std::this_thread::get_id()) << "the handlers were destroyed off the relay thread";
        EXPECT_NE(destroyed_on_, std::thread::id{});
    }
    // And when the Worker is destroyed without close().
    destroyed_ = false;
    destroyed_on_ = {};
    {
        Worker w(config());
        w.init();
    }
    EXPECT_TRUE(destroyed_.load());
    EXPECT_NE(destroyed_on_, std::this_thread::get_id());
}

TEST_F(RelayWorkerTest, ALostRelayFailsItsTaskThenLosesTheLaneWithItsText) {
    Worker w(config());
    w.init();
    submit(w, 1, LOSE, 0, 0);
    const std::string failed = wait_failure(w);
    EXPECT_NE(failed.find("on worker 1 failed: TASK_FAILED: the link to the remote L3 dropped mid-task"),
              std::string::npos)
        << failed;
    // The relay thread loses the lane after the task's result is out; wait for it (hang guard only).
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (w.child_status().at(1).find("lost") == std::string::npos && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(2ms);
    EXPECT_EQ(w.child_status().at(1), "worker 1: lost (remote L3 on host b: no heartbeat for 3 s)");
    EXPECT_EQ(w.child_status().at(0), "worker 0: usable");
    // The relay thread is done: its handlers are gone with it.
    const auto gone_by = std::chrono::steady_clock::now() + 30s;
    while (!destroyed_.load() && std::chrono::steady_clock::now() < gone_by) std::this_thread::sleep_for(2ms);
    EXPECT_TRUE(destroyed_.load());

    // A later task on the lost relay is refused at submit; the forked child still works.
    expect_refused_on_lost_relay(w);
    EXPECT_EQ(slots_->value[3].load(), 0u);
    submit(w, 0, WRITE, 0, 11);
    EXPECT_NO_THROW(w.wait());
    EXPECT_EQ(slots_->value[0].load(), 11u);
    const std::vector<pid_t> pids = w.child_pids();
    w.close();
    for (pid_t p : pids) EXPECT_FALSE(alive(p)) << "pid " << p << " outlived close()";
}

TEST_F(RelayWorkerTest, ARelayLostWhileIdleIsLostWithoutATask) {
    Worker w(config());
    w.init();
    lose_ = true;  // asked after each idle spell (RELAY_IDLE_CHECK)
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (w.child_status().at(1).find("lost") == std::string::npos && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(w.child_status().at(1), "worker 1: lost (remote L3 on host b: no heartbeat for 3 s)");
    expect_refused_on_lost_relay(w);
    w.close();
}

// The relay is asked after every task, not only after an idle spell: a task
// published while it answers (held at a gate here) never reaches its handlers
// and fails with the relay's text, not as a child that exited.
TEST_F(RelayWorkerTest, ATaskPublishedAsTheRelayIsLostIsNotRunAndCarriesItsText) {
    gate_ = false;
    Worker w(config());
    w.init();
    submit(w, 1, LOSE, 0, 1);  // succeeds, and the relay's child is gone from then on
    w.wait();
    // The relay thread now waits in lost() (or is about to) for the gate; the
    // lane is free and usable, so this submit publishes the task at once.
    submit(w, 1, WRITE, 3, 5);
    gate_ = true;
    const std::string failed = wait_failure(w);
    EXPECT_NE(failed.find("not dispatched to worker 1: the child is gone (remote L3 on host b: no heartbeat for 3 s)"),
              std::string::npos)
        << failed;
    EXPECT_EQ(slots_->value[3].load(), 0u) << "the relay ran a task after it had said its child was lost";
    EXPECT_EQ(w.child_status().at(1), "worker 1: lost (remote L3 on host b: no heartbeat for 3 s)");
    w.close();
}

}  // namespace
