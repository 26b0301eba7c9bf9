// TaskGraph: the runtime state of submitted tasks — who waits on whom, which
// tasks are ready, and how a failure flows to everything after it.
//
// Nodes are added with their predecessors (as the dependency tracker inferred
// them) and move PENDING -> READY -> RUNNING -> DONE, or end FAILED (the task
// itself failed) or POISONED (a task it depends on, directly or transitively,
// failed; it never runs). A poisoned node carries its root cause: the failed
// task and its message, shared by every node it poisoned.
//
// Does not own: edge inference (deps/), dispatch (the DispatchQueue), the
// tasks' arguments. Not thread-safe: its owner (EngineCore) is driven under
// the Worker's engine mutex by one thread at a time. Misuse
// (an unknown id, a state transition out of order) throws std::logic_error;
// it is a bug in the engine, not a user error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simpler/deps/task_id.h"
#include "simpler/deps/task_table.h"

namespace simpler {

enum class TaskState : uint8_t { PENDING, READY, RUNNING, DONE, FAILED, POISONED };
const char* task_state_name(TaskState s) noexcept;

// The root cause of a FAILED or POISONED node.
struct TaskFailure {
    TaskId task;          // the task that failed
    std::string message;  // why, as reported
};

class TaskGraph {
public:
    // Adds `task` after `preds`. A predecessor that is DONE or already retired
    // adds no wait; one that FAILED or was POISONED poisons `task` at once (with
    // the same root cause). Duplicates in `preds` count once. Returns the new
    // node's state: READY, PENDING or POISONED. Throws std::logic_error when
    // `task` is already in the graph.
    TaskState add(TaskId task, std::span<const TaskId> preds);

    // READY -> RUNNING.
    void start(TaskId task);
    // start() when the node is READY; any other state is left as it is.
    // Returns the node's state after.
    TaskState start_if_ready(TaskId task);
    // READY or RUNNING -> DONE; appends the successors that became READY to `ready`.
    void complete(TaskId task, std::vector<TaskId>& ready);
    // READY or RUNNING -> FAILED; every transitive successor not yet finished
    // becomes POISONED with this failure as its cause and is appended to `poisoned`.
    // PENDING -> FAILED as well, for a task the engine handed to a chip behind
    // producers still in flight there (EngineCore's chained dispatch) that
    // failed before they finished: they skip it when they complete.
    void fail(TaskId task, std::string message, std::vector<TaskId>& poisoned);
    // Poisons one PENDING or READY node and every transitive successor not yet
    // finished, appending them to `poisoned`; a node in any other state is left alone.
    void poison(TaskId task, const TaskFailure& cause, std::vector<TaskId>& poisoned);
    // Poisons every PENDING or READY node with `cause` (e.g. the worker is
    // closing or lost the endpoint they needed), appending them to `poisoned`;
    // a node `spare` answers true for is left alone.
    void poison_unstarted(const TaskFailure& cause, std::vector<TaskId>& poisoned,
                          const std::function<bool(TaskId)>& spare = {});

    // Drops a finished (DONE, FAILED, POISONED) node; later nodes naming it as a
    // predecessor treat it as DONE. Throws std::logic_error for an unfinished one.
    void retire(TaskId task);

    [[nodiscard]] bool contains(TaskId task) const { return nodes_.contains(task); }
    [[nodiscard]] TaskState state(TaskId task) const;
    // The root cause of a FAILED or POISONED node; null otherwise.
    [[nodiscard]] const TaskFailure* failure(TaskId task) const;
    // The tasks added after `task` that wait on it (some may have finished since).
    [[nodiscard]] std::span<const TaskId> successors(TaskId task) const { return node(task).successors; }
    // Nodes not yet DONE, FAILED or POISONED.
    [[nodiscard]] size_t unfinished() const noexcept { return unfinished_; }
    [[nodiscard]] size_t size() const noexcept { return nodes_.size(); }

private:
    // A node in a pooled slot (task_table.h): reset() empties it for the next task.
    struct Node {
        TaskState state = TaskState::PENDING;
        uint32_t waiting = 0;                  // unfinished predecessors
        std::vector<TaskId> successors;
        std::shared_ptr<const TaskFailure> cause;
        uint64_t stamp = 0;                    // dedupes predecessors within one add()

        void reset() noexcept;
    };
    Node& node(TaskId task);
    const Node& node(TaskId task) const;
    void finish(Node& n, TaskState terminal);
    void poison_from(const Node& root, const std::shared_ptr<const TaskFailure>& cause, std::vector<TaskId>& out);

    TaskTable<Node> nodes_;
    std::vector<Node*> waits_on_;  // add()'s scratch
    size_t unfinished_ = 0;
    uint64_t stamp_ = 0;
};

}  // namespace simpler
