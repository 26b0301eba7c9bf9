#include "simpler/ipc/serve_tasks.h"

#include <exception>

namespace simpler::ipc {

bool serve_task(Mailbox& mailbox, const TaskView& task, const TaskHandler& handler) {
    if (task.withdrawn) {
        mailbox.finish_failed(TaskError::SKIPPED, "not run: its parent withdrew it before it started");
        return false;
    }
    if (!mailbox.blob_length_ok()) {
        mailbox.finish_failed(TaskError::BAD_ARGUMENTS, "argument blob length exceeds the mailbox capacity");
        return false;
    }
    TaskOutcome outcome;
    try {
        outcome = handler(task);
    } catch (const std::exception& e) {
        outcome = TaskOutcome{TaskError::TASK_FAILED, e.what()};
    } catch (...) {
        outcome = TaskOutcome{TaskError::TASK_FAILED, "non-standard exception"};
    }
    if (outcome.error == TaskError::NONE) {
        mailbox.finish_ok();
        return true;
    }
    mailbox.finish_failed(outcome.error, outcome.message);
    return false;
}

Deadline idle_deadline(std::chrono::nanoseconds idle_limit) noexcept {
    if (idle_limit == std::chrono::nanoseconds::max()) return NO_DEADLINE;
    const Clock::time_point now = Clock::now();
    return idle_limit >= Deadline::max() - now ? NO_DEADLINE : now + idle_limit;
}

int serve_tasks(Mailbox& mailbox, const TaskHandler& handler, SpinPolicy policy, std::chrono::nanoseconds idle_limit,
                const std::function<bool()>& stop_after_task) {
    SpinWaiter waiter(policy, SharedCore::STEP_ASIDE);  // the child's side steps off a shared CPU
    bool parent_waking = false;                         // the last finish woke the parent
    for (;;) {
        switch (mailbox.wait_request(waiter, idle_deadline(idle_limit), parent_waking)) {
            case ChildWake::SHUTDOWN: return SERVE_SHUTDOWN;
            case ChildWake::TIMED_OUT: return SERVE_IDLE_LIMIT;
            case ChildWake::TASK: break;
        }
        const TaskView task = mailbox.begin_task();
        serve_task(mailbox, task, handler);
        parent_waking = mailbox.finish_woke_parent();
        if (stop_after_task && stop_after_task()) return SERVE_STOPPED;
    }
}

}  // namespace simpler::ipc
