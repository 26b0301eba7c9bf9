// The Worker's install message, with real forked children: every child of the
// callable's kind gets it (an idle one at once) and answers before
// wait_install returns; a busy child gets it after its task and before its
// next one; a refusal, or a child without an install handler, is reported
// naming the child while the lanes keep serving; a name, an id out of turn,
// a next-level Worker kind, a message too big for the mailbox and the
// reserved callable id are refused before anything is sent; an abandoned
// install still reaches the children and is tracked no more.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "simpler/engine/worker.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

constexpr size_t SUBS = 2;

// Shared with the children (MAP_SHARED before fork).
struct Log {
    std::atomic<uint32_t> seq;
    std::atomic<uint64_t> installed[SUBS];    // the last callable id each sub-worker installed
    std::atomic<uint32_t> payload_bytes[SUBS];
    std::atomic<uint32_t> install_seq[SUBS];
    std::atomic<uint32_t> start_seq[8];
    std::atomic<uint32_t> end_seq[8];
    std::atomic<uint32_t> started[8];
    std::atomic<int> gate;
    std::atomic<int> refuse_on;  // 1 + the sub-worker that refuses; 0: none
};

// scalars: [slot, hold]; a held task waits (up to 20 s) for the gate.
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

ChildHandlers handlers(Log* log, uint32_t index, bool with_install = true) {
    InstallHandler install = [log, index](uint64_t callable, std::span<const std::byte> payload) -> std::string {
        if (log->refuse_on.load() == static_cast<int>(index) + 1) return "refused on purpose";
        log->installed[index] = callable;
        log->payload_bytes[index] = static_cast<uint32_t>(payload.size());
        log->install_seq[index] = ++log->seq;
        return {};
    };
    return ChildHandlers{run_handler(log), {}, with_install ? install : InstallHandler{}};
}

TaskArgs task(uint64_t slot, bool hold) {
    TaskArgs a;
    a.add_scalar(slot);
    a.add_scalar(hold ? 1 : 0);
    return a;
}

template <class Pred>
bool eventually(Pred pred) {  // a hang guard, not a timing claim
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

const std::byte PAYLOAD[5] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};

class WorkerInstallTest : public ::testing::Test {
protected:
    void SetUp() override {
        void* p = mmap(nullptr, sizeof(Log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        log_ = new (p) Log{};
    }
    void TearDown() override { munmap(log_, sizeof(Log)); }

    WorkerConfig config(uint32_t subs, bool with_install = true) {
        WorkerConfig c;
        c.num_sub_workers = subs;
        c.sub_callable_names = {"first"};
        c.sub_handler = [log = log_, with_install](uint32_t i) { return handlers(log, i, with_install); };
        c.close_grace = 500ms;
        return c;
    }
    static void sub_task(Worker& w, uint64_t callable, const TaskArgs& a) {
        MemberSubmit m{&a, std::nullopt};
        w.submit(TaskKind::SUB, callable, {&m, 1}, TaskConfig{});
    }

    Log* log_ = nullptr;
};

}  // namespace

TEST_F(WorkerInstallTest, EveryChildOfTheKindInstallsItBeforeWaitInstallReturns) {
    Worker w(config(SUBS));
    w.init();
    const uint64_t ticket = w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD);
    const std::optional<std::vector<InstallRefusal>> r = w.wait_install(ticket, ipc::NO_DEADLINE);
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->empty());
    for (size_t i = 0; i < SUBS; ++i) {
        EXPECT_EQ(log_->installed[i].load(), 1u) << "sub-worker " << i;
        EXPECT_EQ(log_->payload_bytes[i].load(), sizeof PAYLOAD);
    }
    EXPECT_THROW((void)w.wait_install(ticket, ipc::NO_DEADLINE), std::logic_error);  // answered once
    TaskArgs a = task(0, false);
    sub_task(w, 1, a);
    w.wait();
    EXPECT_EQ(log_->started[0].load(), 1u);
    w.close();
}

TEST_F(WorkerInstallTest, ABusyChildInstallsAfterItsTaskAndBeforeItsNext) {
    Worker w(config(1));
    w.init();
    TaskArgs held = task(0, true);
    sub_task(w, 0, held);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    const uint64_t ticket = w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD);
    // The child is inside the held task: it cannot have answered.
    EXPECT_FALSE(w.wait_install(ticket, ipc::Clock::now() + 20ms).has_value());
    EXPECT_EQ(log_->install_seq[0].load(), 0u);
    log_->gate = 1;
    const std::optional<std::vector<InstallRefusal>> r = w.wait_install(ticket, ipc::NO_DEADLINE);
    ASSERT_TRUE(r.has_value() && r->empty());
    TaskArgs next = task(1, false);
    sub_task(w, 1, next);
    w.wait();
    EXPECT_LT(log_->end_seq[0].load(), log_->install_seq[0].load());
    EXPECT_LT(log_->install_seq[0].load(), log_->start_seq[1].load());
    w.close();
}

TEST_F(WorkerInstallTest, ARefusalNamesTheChildAndTheLanesKeepServing) {
    log_->refuse_on = 2;  // sub-worker 1
    Worker w(config(SUBS));
    w.init();
    const std::optional<std::vector<InstallRefusal>> r =
        w.wait_install(w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD), ipc::NO_DEADLINE);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].child, (ChildRef{ChildKind::SUB_WORKER, 1}));
    EXPECT_EQ((*r)[0].why, "refused on purpose");
    EXPECT_EQ(log_->installed[0].load(), 1u);
    TaskArgs a = task(0, false), b = task(1, false);
    sub_task(w, 0, a);
    sub_task(w, 0, b);
    w.wait();
    for (const std::string& s : w.child_status()) EXPECT_NE(s.find("usable"), std::string::npos) << s;
    w.close();
}

TEST_F(WorkerInstallTest, AChildWithoutAnInstallHandlerRefusesIt) {
    Worker w(config(1, /*with_install=*/false));
    w.init();
    const std::optional<std::vector<InstallRefusal>> r =
        w.wait_install(w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD), ipc::NO_DEADLINE);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->size(), 1u);
    EXPECT_NE((*r)[0].why.find("takes no callables registered after it started"), std::string::npos) << (*r)[0].why;
    TaskArgs a = task(0, false);
    sub_task(w, 0, a);
    w.wait();
    w.close();
}

TEST_F(WorkerInstallTest, BadInstallsAreRefusedBeforeAnythingIsSent) {
    WorkerConfig c = config(1);
    c.blob_capacity = 64;
    Worker w(std::move(c));
    EXPECT_THROW((void)w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD), std::logic_error);  // before init
    w.init();
    EXPECT_THROW((void)w.begin_install(ChildKind::SUB_WORKER, 5, "late", PAYLOAD), std::invalid_argument);
    EXPECT_THROW((void)w.begin_install(ChildKind::WORKER, 0, "late", PAYLOAD), std::invalid_argument);
    const std::vector<std::byte> big(64, std::byte{0});
    EXPECT_THROW((void)w.begin_install(ChildKind::SUB_WORKER, 1, "late", big), std::invalid_argument);
    TaskArgs a = task(0, false);
    MemberSubmit m{&a, std::nullopt};
    EXPECT_THROW(w.submit(TaskKind::SUB, INSTALL_CALLABLE, {&m, 1}, TaskConfig{}), std::invalid_argument);
    // Nothing was taken: id 1 is still the next one.
    const std::optional<std::vector<InstallRefusal>> r =
        w.wait_install(w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD), ipc::NO_DEADLINE);
    ASSERT_TRUE(r.has_value() && r->empty());
    w.close();
    EXPECT_THROW((void)w.begin_install(ChildKind::SUB_WORKER, 2, "later", PAYLOAD), std::logic_error);
}

TEST_F(WorkerInstallTest, AnAbandonedInstallStillReachesTheChildrenAndIsTrackedNoMore) {
    Worker w(config(1));
    w.init();
    TaskArgs held = task(0, true);
    sub_task(w, 0, held);
    ASSERT_TRUE(eventually([&] { return log_->started[0].load() == 1; }));
    const uint64_t ticket = w.begin_install(ChildKind::SUB_WORKER, 1, "late", PAYLOAD);
    w.abandon_install(ticket);
    w.abandon_install(ticket);  // nothing: no longer pending
    EXPECT_THROW((void)w.wait_install(ticket, ipc::NO_DEADLINE), std::logic_error);
    log_->gate = 1;
    TaskArgs next = task(1, false);
    sub_task(w, 1, next);
    w.wait();
    EXPECT_EQ(log_->installed[0].load(), 1u);
    EXPECT_LT(log_->install_seq[0].load(), log_->start_seq[1].load());
    w.close();
}
