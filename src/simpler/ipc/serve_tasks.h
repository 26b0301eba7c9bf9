// serve_tasks: the child's side of a lane as one loop. It waits for a task
// (spin, then futex), hands it to the handler, and stores the outcome, until
// the parent sets the shutdown word. Its waiter steps off a CPU it finds
// itself sharing with the parent (spin_wait.h).
//
// The handler owns the meaning of callable ids, the call config and the blob
// (it decodes the blob with TaskArgsView, which validates every element). The
// loop turns a blob length beyond the lane's capacity into BAD_ARGUMENTS
// without calling the handler, and an exception escaping the handler into
// TASK_FAILED carrying what(); the child keeps serving either way.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "simpler/ipc/lane_board.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler::ipc {

struct TaskOutcome {
    TaskError error = TaskError::NONE;  // NONE, or one a child may report (TASK_FAILED, BAD_ARGUMENTS, ...)
    std::string message;                // why, when error != NONE
};

// Where a served task's outcome is also recorded: task `seq` of `lane` on
// `board` (lane_board.h), before the parent is answered.
struct BoardNote {
    LaneBoard* board = nullptr;
    uint32_t lane = 0;
    uint64_t seq = 0;
};

using TaskHandler = std::function<TaskOutcome(const TaskView& task)>;

// Exit statuses of serve_tasks (the child's body returns them).
inline constexpr int SERVE_SHUTDOWN = 0;   // the parent asked the child to stop
inline constexpr int SERVE_IDLE_LIMIT = 3; // no request for idle_limit
inline constexpr int SERVE_STOPPED = 4;    // stop_after_task said so

// Serves until shutdown (SERVE_SHUTDOWN), until no request arrives for
// idle_limit (SERVE_IDLE_LIMIT; the default waits forever), or until
// stop_after_task, asked after each task's result is stored, answers true
// (SERVE_STOPPED; empty: never asked).
// Serves the task begin_task() just returned from `mailbox`: answers a
// withdrawn one SKIPPED, refuses a blob length beyond the capacity, runs `handler`, stores its outcome (an escaping
// exception as TASK_FAILED). Returns whether the task succeeded. `note`: the
// board that also records the outcome (null: none).
bool serve_task(Mailbox& mailbox, const TaskView& task, const TaskHandler& handler, const BoardNote* note = nullptr);

// Stores `outcome` as the task's result (on `note`'s board first, when
// given); returns whether it is a success.
bool finish_task(Mailbox& mailbox, const TaskOutcome& outcome, const BoardNote* note = nullptr);

// When a wait for the next request that starts now gives up: NO_DEADLINE for
// an idle_limit too long to count (nanoseconds::max(): serve forever), without
// reading the clock then (the loop asks once per task).
[[nodiscard]] Deadline idle_deadline(std::chrono::nanoseconds idle_limit) noexcept;

int serve_tasks(Mailbox& mailbox, const TaskHandler& handler, SpinPolicy policy = {},
                std::chrono::nanoseconds idle_limit = std::chrono::nanoseconds::max(),
                const std::function<bool()>& stop_after_task = {});

}  // namespace simpler::ipc
