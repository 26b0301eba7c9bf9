// Worker with next-level Workers as children (ChildKind::WORKER lanes): the
// config refuses chips and Workers together and Workers without a handler; a
// child that runs a whole Worker of its own (forked inside the child, serving
// each task by forwarding it to its chip) takes tasks from its parent, two such
// children run at once (a rendezvous through their chips), a failure at the
// chip reaches the parent's wait() naming the task, the worker and the chip's
// cause, and close() leaves no process of the tree behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine_fixtures.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

struct Shared {
    std::atomic<int> met;          // MEET tasks that have arrived (on any chip of the tree)
    std::atomic<pid_t> chips[8];   // the chip pids, by L3 index, as the L3s report them
};

enum Op : uint64_t { OK = 0, FAIL = 1, MEET = 2 };

// The chips' handler: scalar 0 is the op.
ipc::TaskHandler chip_handler(Shared* shared) {
    return [shared](const ipc::TaskView& task) -> ipc::TaskOutcome {
        const DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
        switch (args.scalars.at(0)) {
            case FAIL: return {ipc::TaskError::TASK_FAILED, "chip kernel failed on purpose"};
            case MEET: {
                shared->met.fetch_add(1);
                const auto give_up = std::chrono::steady_clock::now() + 20s;
                while (shared->met.load() < 2) {
                    if (std::chrono::steady_clock::now() > give_up)
                        return {ipc::TaskError::TASK_FAILED, "met no partner"};
                    std::this_thread::sleep_for(1ms);
                }
                return {};
            }
            default: return {};
        }
    };
}

// Inside L3 child `index`: a Worker of one chip, forked here, and a handler that
// forwards each task of the parent to that chip (the same callable and
// arguments, INPUT unless the parent's write mask says the task writes it).
ipc::TaskHandler forwarding_l3(Shared* shared, uint32_t index) {
    WorkerConfig c;
    c.num_chips = 1;
    c.chip_handler = [shared](uint32_t) { return chip_handler(shared); };
    c.close_grace = 500ms;
    auto l3 = std::make_shared<Worker>(std::move(c));
    l3->init();
    shared->chips[index] = l3->child_pids().at(0);
    return [l3](const ipc::TaskView& task) -> ipc::TaskOutcome {
        const DecodedTaskArgs decoded = read_blob(task.blob.data(), task.blob.size());
        CallConfig config{};
        std::memcpy(&config, task.config.bytes, sizeof config);
        TaskArgs args;
        for (size_t i = 0; i < decoded.tensors.size(); ++i)
            args.add_tensor(decoded.tensors[i], writes_tensor(config, i) ? TensorArgType::INOUT : TensorArgType::INPUT);
        for (uint64_t s : decoded.scalars) args.add_scalar(s);
        const MemberSubmit m{&args, 0u};
        try {
            l3->submit(TaskKind::NEXT_LEVEL, task.callable_id, {&m, 1}, config);
            l3->wait();
        } catch (const std::exception& e) {
            return {ipc::TaskError::TASK_FAILED, std::string("L3: ") + e.what()};
        }
        return {};
    };
}

using engine_test::alive;

bool gone_within(pid_t pid, std::chrono::seconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (alive(pid)) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

class NestedWorkerTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        shared_ = new (p) Shared{};
    }
    void TearDown() override { munmap(shared_, sizeof(Shared)); }

    WorkerConfig l4(uint32_t children) {
        WorkerConfig c;
        c.num_workers = children;
        c.worker_handler = [shared = shared_](uint32_t index) { return forwarding_l3(shared, index); };
        c.worker_callable_names = {"forward"};
        c.close_grace = 2s;
        return c;
    }
    static TaskArgs op(Op o) {
        TaskArgs a;
        a.add_scalar(o);
        return a;
    }

    Shared* shared_ = nullptr;
};

TEST(NestedWorkerConfig, ChipsAndWorkersTogetherOrWorkersWithoutAHandlerAreRefused) {
    WorkerConfig c;
    c.num_chips = 1;
    c.num_workers = 1;
    try {
        c.validate();
        FAIL() << "accepted chips and Workers together";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("WorkerConfig.num_workers: a Worker's next level is chips or Workers"),
                  std::string::npos)
            << e.what();
    }
    WorkerConfig w;
    w.num_workers = 1;
    EXPECT_THROW(Worker{w}, std::invalid_argument);
}

TEST_F(NestedWorkerTest, TwoNestedWorkersRunAtOnceAndCloseLeavesNoProcessOfTheTree) {
    Worker w(l4(2));
    w.init();
    TaskArgs meet = op(MEET);
    for (uint32_t child = 0; child < 2; ++child) {
        const MemberSubmit m{&meet, child};
        w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
    }
    w.wait();  // each chip task finishes only when the other runs too
    EXPECT_EQ(shared_->met.load(), 2);
    std::vector<pid_t> tree = w.child_pids();
    tree.push_back(shared_->chips[0]);
    tree.push_back(shared_->chips[1]);
    w.close();
    for (pid_t p : tree) EXPECT_TRUE(gone_within(p, 10s)) << "pid " << p << " outlived close()";
}

TEST_F(NestedWorkerTest, AFailureAtTheChipReachesTheTopNamingEachLevel) {
    Worker w(l4(1));
    w.init();
    TaskArgs fail = op(FAIL);
    const MemberSubmit m{&fail, 0u};
    w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
    try {
        w.wait();
        FAIL() << "wait() did not throw";
    } catch (const RunError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("(callable 'forward', member 0) on worker 0 failed: TASK_FAILED: L3: "), std::string::npos)
            << what;
        EXPECT_NE(what.find("on chip 0 failed: TASK_FAILED: chip kernel failed on purpose"), std::string::npos) << what;
    }
    TaskArgs ok = op(OK);
    const MemberSubmit again{&ok, 0u};
    w.submit(TaskKind::NEXT_LEVEL, 0, {&again, 1}, TaskConfig{});
    EXPECT_NO_THROW(w.wait());
}

TEST_F(NestedWorkerTest, AKilledNestedWorkerTakesItsChipWithItAndIsReportedLost) {
    Worker w(l4(1));
    w.init();
    const pid_t l3 = w.child_pids().at(0);
    // The chip pid is written by the child during its start; wait for it.
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (shared_->chips[0].load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    const pid_t chip = shared_->chips[0].load();
    ASSERT_GT(chip, 0);
    ASSERT_EQ(kill(l3, SIGKILL), 0);
    const bool chip_gone = gone_within(chip, 10s);
    EXPECT_TRUE(chip_gone) << "the chip of a killed L3 outlived it";
    if (!chip_gone) kill(chip, SIGKILL);  // it holds the test's output open: ctest would wait for it
    const auto lost_by = std::chrono::steady_clock::now() + 20s;
    while (w.child_status().at(0).find("lost") == std::string::npos && std::chrono::steady_clock::now() < lost_by) {
        TaskArgs ok = op(OK);
        const MemberSubmit m{&ok, 0u};
        try {
            w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
            w.wait();
        } catch (const std::exception&) {}
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_NE(w.child_status().at(0).find("worker 0: lost (CHILD_DIED: child killed by signal 9"), std::string::npos)
        << w.child_status().at(0);
}

}  // namespace
