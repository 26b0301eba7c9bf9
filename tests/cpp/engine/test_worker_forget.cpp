// The Worker's forget message and the exact deferred free, with real forked
// children: an idle lane gets a forget at once; a busy lane gets it after its
// task and before its next one; a task for a lane whose child is in a forget
// waits for the answer; a child without a forget hook ignores it and
// keeps serving; the reserved callable id is refused at submit; and closing an
// owned buffer that held tasks name keeps its /dev/shm object until they
// finish, frees it then, and sends every lane a forget of it, while a buffer no
// task names goes at once; a task whose child is lost, and every unfinished
// task of a Worker that closes, let go of what they held.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "simpler/backing/posix_shm_owner.h"
#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

constexpr size_t LANES = 4;  // chips at 0.., sub-workers at SUB_LANE..
constexpr size_t SUB_LANE = 2;

// Shared with the children (MAP_SHARED before fork).
struct Log {
    std::atomic<uint32_t> seq;  // orders every event below
    std::atomic<uint32_t> forgets[LANES];
    std::atomic<uint32_t> forgotten_ids[LANES];
    std::atomic<uint32_t> forget_seq[LANES];
    CanonicalIdentity last[LANES];  // written before forgets[] is bumped
    std::atomic<uint32_t> started[16];
    std::atomic<uint32_t> start_seq[16];
    std::atomic<uint32_t> end_seq[16];
    std::atomic<int> gate;
    std::atomic<int> hold_forgets;  // 1: a forget waits for the gate too
    std::atomic<int> in_forget;     // a forget handler has started
};

// scalars: [slot, hold]: a held task waits (up to 20 s) for the gate.
ipc::TaskHandler run_handler(Log* log) {
    return [log](const ipc::TaskView& task) -> ipc::TaskOutcome {
        DecodedTaskArgs args = read_blob(task.blob.data(), task.blob.size());
        const uint64_t slot = args.scalars.at(0), hold = args.scalars.at(1);
        log->start_seq[slot] = ++log->seq;
        log->started[slot] = 1;
        const auto give_up = std::chrono::steady_clock::now() + 20s;
        while (hold != 0 && log->gate.load() == 0) {
            if (std::chrono::steady_clock::now() > give_up) return {ipc::TaskError::TASK_FAILED, "gate never opened"};
            std::this_thread::sleep_for(1ms);
        }
        log->end_seq[slot] = ++log->seq;
        return {};
    };
}

ChildHandlers handlers(Log* log, size_t lane) {
    return ChildHandlers{
        run_handler(log), [log, lane](std::span<const CanonicalIdentity> ids) {
            log->in_forget = 1;
            const auto give_up = std::chrono::steady_clock::now() + 20s;
            while (log->hold_forgets.load() != 0 && log->gate.load() == 0 && std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(1ms);
            if (!ids.empty()) log->last[lane] = ids.back();
            log->forgotten_ids[lane] += static_cast<uint32_t>(ids.size());
            log->forget_seq[lane] = ++log->seq;
            ++log->forgets[lane];
        }};
}

CanonicalIdentity ident(uint64_t id) {
    CanonicalIdentity c{};
    std::memset(c.owner_instance_id, 0x55, sizeof c.owner_instance_id);
    c.buffer_id = id;
    c.generation = 1;
    return c;
}

TaskArgs task(uint64_t slot, bool hold, const Tensor* t = nullptr) {
    TaskArgs a;
    if (t != nullptr) a.add_tensor(*t, TensorArgType::INPUT);
    a.add_scalar(slot);
    a.add_scalar(hold ? 1 : 0);
    return a;
}

Tensor bytes_of(const BufferDescriptor& d) {
    const uint32_t shapes[] = {static_cast<uint32_t>(d.nbytes)}, strides[] = {1};
    return make_tensor(d, shapes, DataType::UINT8, strides, 0);
}

bool shm_exists(const PosixShmOwner& o) { return access(("/dev/shm/" + o.name()).c_str(), F_OK) == 0; }

// A hang guard, not a timing claim.
template <class Pred>
bool eventually(Pred pred) {
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

class WorkerForgetTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        log_ = new (p) Log{};
    }
    void TearDown() override { munmap(log_, sizeof(Log)); }

    WorkerConfig config(uint32_t chips, uint32_t subs) {
        WorkerConfig c;
        c.num_chips = chips;
        c.num_sub_workers = subs;
        c.chip_handler = [log = log_](uint32_t i) { return handlers(log, i); };
        c.sub_handler = [log = log_](uint32_t i) { return handlers(log, SUB_LANE + i); };
        c.close_grace = 500ms;
        return c;
    }
    static void chip_task(Worker& w, const TaskArgs& a, uint32_t chip) {
        MemberSubmit m{&a, chip};
        w.submit(TaskKind::NEXT_LEVEL, 1, {&m, 1}, TaskConfig{});
    }
    static void sub_task(Worker& w, const TaskArgs& a) {
        MemberSubmit m{&a, std::nullopt};
        w.submit(TaskKind::SUB, 0, {&m, 1}, TaskConfig{});
    }

    Log* log_ = nullptr;
};

}  // namespace

TEST_F(WorkerForgetTest, EveryIdleLaneGetsTheForgetAtOnce) {
    Worker w(config(2, 2));
    w.init();
    const CanonicalIdentity ids[] = {ident(1), ident(2)};
    w.forget(ids);
    for (size_t lane : {size_t{0}, size_t{1}, SUB_LANE, SUB_LANE + 1}) {
        ASSERT_TRUE(eventually([&] { return log_->forgets[lane].load() > 0; })) << "lane " << lane;
        EXPECT_EQ(log_->forgotten_ids[lane].load(), 2u);
        EXPECT_EQ(log_->last[lane], ident(2));
    }
    // The lanes keep serving.
    TaskArgs a = task(0, false);
    chip_task(w, a, 1);
    w.wait();
    EXPECT_EQ(log_->started[0].load(), 1u);
    w.close();
}

TEST_F(WorkerForgetTest, ABusyLaneGetsTheForgetAfterItsTaskAndBeforeTheNext) {
    Worker w(config(1, 0));
    w.init();
    TaskArgs held = task(0, true);
    TaskArgs next = task(1, false);
    chip_task(w, held, 0);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    const CanonicalIdentity id = ident(7);
    w.forget({&id, 1});
    chip_task(w, next, 0);
    EXPECT_EQ(log_->forgets[0].load(), 0u);  // the child is inside the held task
    log_->gate = 1;
    w.wait();
    ASSERT_EQ(log_->forgets[0].load(), 1u);
    EXPECT_EQ(log_->last[0], id);
    EXPECT_LT(log_->end_seq[0].load(), log_->forget_seq[0].load());
    EXPECT_LT(log_->forget_seq[0].load(), log_->start_seq[1].load());
    w.close();
}

TEST_F(WorkerForgetTest, ATaskForALaneWhoseChildIsInAForgetIsHeldUntilItAnswers) {
    log_->hold_forgets = 1;
    Worker w(config(1, 0));
    w.init();
    const CanonicalIdentity id = ident(9);
    w.forget({&id, 1});
    ASSERT_TRUE(eventually([&] { return log_->in_forget.load() == 1; }));  // the forget is on the child
    TaskArgs a = task(0, false);
    chip_task(w, a, 0);  // published only once the forget is answered, never refused as busy
    log_->gate = 1;
    w.wait();
    EXPECT_EQ(log_->started[0].load(), 1u);
    EXPECT_LT(log_->forget_seq[0].load(), log_->start_seq[0].load());
    w.close();
}

TEST_F(WorkerForgetTest, AChildWithoutAForgetHookIgnoresItAndKeepsServing) {
    WorkerConfig c = config(1, 0);
    c.chip_handler = [log = log_](uint32_t) { return run_handler(log); };  // a TaskHandler alone
    Worker w(std::move(c));
    w.init();
    const CanonicalIdentity id = ident(3);
    w.forget({&id, 1});
    TaskArgs a = task(0, false);
    chip_task(w, a, 0);
    w.wait();
    EXPECT_EQ(log_->started[0].load(), 1u);
    EXPECT_EQ(log_->forgets[0].load(), 0u);
    w.close();
}

TEST_F(WorkerForgetTest, TheReservedCallableIdIsRefusedAtSubmit) {
    Worker w(config(1, 0));
    w.init();
    TaskArgs a = task(0, false);
    MemberSubmit m{&a, 0u};
    try {
        w.submit(TaskKind::NEXT_LEVEL, FORGET_CALLABLE, {&m, 1}, TaskConfig{});
        ADD_FAILURE() << "submit did not throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("reserved for the Worker's forget message"), std::string::npos)
            << e.what();
    }
    w.close();
}

TEST_F(WorkerForgetTest, ClosingABufferHeldTasksNameFreesItWhenTheyFinishAndForgetsItEverywhere) {
    Worker w(config(1, 1));
    w.init();
    auto named = PosixShmOwner::create(256);
    auto idle = PosixShmOwner::create(256);
    const Tensor t = bytes_of(named->descriptor());
    TaskArgs on_chip = task(0, true, &t);
    TaskArgs on_sub = task(1, true, &t);
    chip_task(w, on_chip, 0);
    sub_task(w, on_sub);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1 && log_->started[1].load() == 1; }));

    idle->close();  // no task names it: gone at once, whatever else runs
    EXPECT_FALSE(shm_exists(*idle));
    EXPECT_FALSE(idle->free_pending());

    named->close();
    EXPECT_TRUE(named->closed());
    EXPECT_TRUE(shm_exists(*named));
    EXPECT_TRUE(named->free_pending());
    TaskArgs late = task(2, false, &t);
    EXPECT_THROW(chip_task(w, late, 0), std::invalid_argument);

    log_->gate = 1;
    w.wait();
    EXPECT_FALSE(shm_exists(*named));
    EXPECT_FALSE(named->free_pending());
    for (size_t lane : {size_t{0}, SUB_LANE}) {
        ASSERT_TRUE(eventually([&] {
            return log_->forgets[lane].load() >= 1 && log_->last[lane] == named->identity();
        })) << "lane "
            << lane;
    }
    w.close();
}

TEST_F(WorkerForgetTest, ATaskWhoseChildIsLostReleasesItsHold) {
    Worker w(config(1, 0));
    w.init();
    auto named = PosixShmOwner::create(256);
    const Tensor t = bytes_of(named->descriptor());
    TaskArgs held = task(0, true, &t);
    chip_task(w, held, 0);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    named->close();
    EXPECT_TRUE(named->free_pending());
    ASSERT_EQ(kill(w.child_pids().at(0), SIGKILL), 0);
    EXPECT_THROW(w.wait(), RunError);
    EXPECT_FALSE(shm_exists(*named));
    EXPECT_FALSE(named->free_pending());
    w.close();
}

TEST_F(WorkerForgetTest, ClosingTheWorkerReleasesTheHoldsOfTasksThatNeverFinished) {
    Worker w(config(1, 0));
    w.init();
    auto named = PosixShmOwner::create(256);
    const Tensor t = bytes_of(named->descriptor());
    TaskArgs held = task(0, true, &t);
    TaskArgs queued = task(1, false, &t);
    chip_task(w, held, 0);
    chip_task(w, queued, 0);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    named->close();
    EXPECT_TRUE(named->free_pending());
    w.close();  // the held task never comes back, the queued one never runs
    EXPECT_FALSE(shm_exists(*named));
    EXPECT_FALSE(named->free_pending());
}

TEST_F(WorkerForgetTest, CancellingTheOnlyTaskThatNamesABufferFreesItAtOnce) {
    Worker w(config(1, 0));
    w.init();
    auto other = PosixShmOwner::create(256);
    auto named = PosixShmOwner::create(256);
    const Tensor o = bytes_of(other->descriptor());
    const Tensor t = bytes_of(named->descriptor());
    TaskArgs held = task(0, true, &o);
    TaskArgs queued = task(1, false, &t);  // behind the held task on the one chip
    chip_task(w, held, 0);
    chip_task(w, queued, 0);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    named->close();
    EXPECT_TRUE(named->free_pending());
    (void)w.cancel_run("cancelled by the test");
    EXPECT_FALSE(shm_exists(*named));
    EXPECT_FALSE(named->free_pending());
    log_->gate = 1;
    w.wait();
    EXPECT_EQ(log_->started[1].load(), 0u);
    w.close();
}
