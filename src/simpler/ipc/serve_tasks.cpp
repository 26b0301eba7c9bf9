#include "simpler/ipc/serve_tasks.h"

#include <exception>

namespace simpler::ipc {

bool finish_task(Mailbox& mailbox, const TaskOutcome& outcome, const BoardNote* note) {
    const bool ok = outcome.error == TaskError::NONE;
    // The outputs are written: waiters on other lanes may start before the parent hears.
    if (note != nullptr) note->board->complete(note->lane, note->seq, ok);
    if (ok) {
        mailbox.finish_ok();
    } else {
        mailbox.finish_failed(outcome.error, outcome.message);
    }
    return ok;
}

bool serve_task(Mailbox& mailbox, const TaskView& task, const TaskHandler& handler, const BoardNote* note) {
    if (task.withdrawn) {
        return finish_task(mailbox, {TaskError::SKIPPED, "not run: its parent withdrew it before it started"}, note);
    }
    if (!mailbox.blob_length_ok()) {
        return finish_task(mailbox, {TaskError::BAD_ARGUMENTS, "argument blob length exceeds the mailbox capacity"},
                           note);
    }
    TaskOutcome outcome;
    try {
        outcome = handler(task);
    } catch (const std::exception& e) {
        outcome = TaskOutcome{TaskError::TASK_FAILED, e.what()};
    } catch (...) {
        outcome = TaskOutcome{TaskError::TASK_FAILED, "non-standard exception"};
    }
    return finish_task(mailbox, outcome, note);
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
