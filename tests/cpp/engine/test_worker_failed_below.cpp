// A next-level Worker child that answers a task with its run's FailureReport
// (FAILED_BELOW): the parent's RunError carries its own part and the child's
// below it, and a report it cannot trust (undecodable, or not a level-3
// Worker's under a level-4 one) fails the task as PROTOCOL, naming why.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "simpler/engine/worker.h"
#include "simpler/ipc/mailbox_frame.h"

using namespace simpler;
using namespace std::chrono_literals;

namespace {

FailureReport l3_chip_failure(uint32_t level) {
    FailedTask f;
    f.level = level;
    f.has_task = true;
    f.task = 2;
    f.callable = "std.copy";
    f.child = ChildRef{ChildKind::CHIP, 1};
    f.code = FailureCode::TASK_FAILED;
    f.text = "kernel said no";
    return FailureReport{{f}};
}

// A level-4 Worker whose one next-level child answers every task with `answer`.
FailureReport run_answered(const std::string& answer) {
    WorkerConfig c;
    c.level = 4;
    c.num_workers = 1;
    c.worker_callable_names = {"orch"};
    c.close_grace = 2s;
    c.worker_handler = [answer](uint32_t) -> ChildHandlers {
        return [answer](const ipc::TaskView&) { return ipc::TaskOutcome{ipc::TaskError::FAILED_BELOW, answer}; };
    };
    Worker w(c);
    w.init();
    TaskArgs a;
    const MemberSubmit m{&a, 0};
    w.submit(TaskKind::NEXT_LEVEL, 0, {&m, 1}, TaskConfig{});
    FailureReport out;
    try {
        w.wait();
        ADD_FAILURE() << "wait() did not throw";
    } catch (const RunError& e) {
        EXPECT_EQ(std::string(e.what()), e.report().render());
        out = e.report();
    }
    w.close();
    return out;
}

class FailedBelowTest : public ::testing::Test {
protected:
    void TearDown() override {
        errno = 0;
        EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child process is left unreaped";
        EXPECT_EQ(errno, ECHILD);
    }
};

TEST_F(FailedBelowTest, TheChildsReportIsTheLevelBelowTheParentsTask) {
    const FailureReport r = run_answered(encode_failure(l3_chip_failure(3), ipc::ERROR_MESSAGE_BYTES - 1));
    ASSERT_EQ(r.levels.size(), 2u);
    EXPECT_EQ(r.levels[0].level, 4u);
    EXPECT_EQ(r.levels[0].code, FailureCode::FAILED_BELOW);
    EXPECT_EQ(r.levels[0].callable, "orch");
    EXPECT_EQ(r.levels[0].child, (ChildRef{ChildKind::WORKER, 0}));
    EXPECT_EQ(r.levels[1].callable, "std.copy");
    EXPECT_EQ(r.path(), (std::vector<std::string>{"L3[0]", "chip 1"}));
    EXPECT_NE(r.render().find("on worker 0 failed: L3[0] → chip 1: task 2 of run 0 (callable 'std.copy', member 0) "
                              "on chip 1 failed: TASK_FAILED: kernel said no"),
              std::string::npos)
        << r.render();
}

TEST_F(FailedBelowTest, AReportFromTheWrongLevelOrThatDoesNotDecodeIsAProtocolFailure) {
    const FailureReport wrong = run_answered(encode_failure(l3_chip_failure(2), ipc::ERROR_MESSAGE_BYTES - 1));
    ASSERT_EQ(wrong.levels.size(), 1u);
    EXPECT_EQ(wrong.levels[0].code, FailureCode::PROTOCOL);
    EXPECT_EQ(wrong.levels[0].text,
              "the child's failure report does not decode: failure report.levels[0].level: a child of a level-4 "
              "Worker is level 3 (got 2)");
    const FailureReport garbage = run_answered("TASK_FAILED: not a report");
    ASSERT_EQ(garbage.levels.size(), 1u);
    EXPECT_EQ(garbage.levels[0].code, FailureCode::PROTOCOL);
    EXPECT_NE(garbage.levels[0].text.find("must start with 'simpler-failure/1"), std::string::npos)
        << garbage.levels[0].text;
}

}  // namespace
