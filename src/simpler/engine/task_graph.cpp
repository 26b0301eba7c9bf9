#include "simpler/engine/task_graph.h"

#include <stdexcept>

namespace simpler {

const char* task_state_name(TaskState s) noexcept {
    switch (s) {
        case TaskState::PENDING: return "PENDING";
        case TaskState::READY: return "READY";
        case TaskState::RUNNING: return "RUNNING";
        case TaskState::DONE: return "DONE";
        case TaskState::FAILED: return "FAILED";
        case TaskState::POISONED: return "POISONED";
    }
    return "UNKNOWN";
}

namespace {

bool finished(TaskState s) noexcept {
    return s == TaskState::DONE || s == TaskState::FAILED || s == TaskState::POISONED;
}

[[noreturn]] void misuse(const char* what, TaskId task, TaskState s) {
    throw std::logic_error(std::string("TaskGraph: ") + what + " task " + std::to_string(task) + " in state " +
                           task_state_name(s));
}

}  // namespace

// A node's successor list is kept for the next task of its slot up to this
// many ids; a longer one (a task many others waited on) is freed.
constexpr size_t KEPT_SUCCESSORS = 64;

void TaskGraph::Node::reset() noexcept {
    state = TaskState::PENDING;
    waiting = 0;
    successors.clear();
    if (successors.capacity() > KEPT_SUCCESSORS) std::vector<TaskId>().swap(successors);
    cause.reset();
    stamp = 0;
}

TaskGraph::Node& TaskGraph::node(TaskId task) {
    Node* n = nodes_.find(task);
    if (n == nullptr) throw std::logic_error("TaskGraph: unknown task " + std::to_string(task));
    return *n;
}

const TaskGraph::Node& TaskGraph::node(TaskId task) const {
    const Node* n = nodes_.find(task);
    if (n == nullptr) throw std::logic_error("TaskGraph: unknown task " + std::to_string(task));
    return *n;
}

TaskState TaskGraph::add(TaskId task, std::span<const TaskId> preds) {
    if (nodes_.contains(task)) throw std::logic_error("TaskGraph: task " + std::to_string(task) + " added twice");
    const uint64_t stamp = ++stamp_;
    std::shared_ptr<const TaskFailure> cause;
    std::vector<Node*>& waits_on = waits_on_;
    waits_on.clear();
    for (TaskId p : preds) {
        Node* pred = p == task ? nullptr : nodes_.find(p);
        if (pred == nullptr) continue;  // retired: as good as DONE
        if (pred->stamp == stamp) continue;
        pred->stamp = stamp;
        if (pred->state == TaskState::DONE) continue;
        if (pred->state == TaskState::FAILED || pred->state == TaskState::POISONED) {
            if (!cause) cause = pred->cause;
            continue;
        }
        waits_on.push_back(pred);
    }
    // Slots do not move: the predecessors' pointers stay valid across the insert.
    Node& fresh = nodes_.insert(task);
    if (cause) {
        fresh.state = TaskState::POISONED;
        fresh.cause = std::move(cause);
        return TaskState::POISONED;
    }
    for (Node* pred : waits_on) pred->successors.push_back(task);
    fresh.waiting = static_cast<uint32_t>(waits_on.size());
    fresh.state = fresh.waiting == 0 ? TaskState::READY : TaskState::PENDING;
    ++unfinished_;
    return fresh.state;
}

void TaskGraph::start(TaskId task) {
    Node& n = node(task);
    if (n.state != TaskState::READY) misuse("start of", task, n.state);
    n.state = TaskState::RUNNING;
}

TaskState TaskGraph::start_if_ready(TaskId task) {
    Node& n = node(task);
    if (n.state == TaskState::READY) n.state = TaskState::RUNNING;
    return n.state;
}

void TaskGraph::finish(Node& n, TaskState terminal) {
    if (!finished(n.state)) --unfinished_;
    n.state = terminal;
}

void TaskGraph::complete(TaskId task, std::vector<TaskId>& ready) {
    Node& n = node(task);
    if (n.state != TaskState::READY && n.state != TaskState::RUNNING) misuse("completion of", task, n.state);
    finish(n, TaskState::DONE);
    for (TaskId s : n.successors) {
        Node* succ = nodes_.find(s);
        if (succ == nullptr) continue;
        if (succ->state != TaskState::PENDING) continue;  // poisoned meanwhile
        if (--succ->waiting == 0) {
            succ->state = TaskState::READY;
            ready.push_back(s);
        }
    }
    n.successors.clear();
    if (n.successors.capacity() > KEPT_SUCCESSORS) std::vector<TaskId>().swap(n.successors);
}

void TaskGraph::fail(TaskId task, std::string message, std::vector<TaskId>& poisoned) {
    Node& n = node(task);
    if (finished(n.state)) misuse("failure of", task, n.state);
    n.cause = std::make_shared<const TaskFailure>(TaskFailure{task, std::move(message)});
    finish(n, TaskState::FAILED);
    poison_from(n, n.cause, poisoned);
}

void TaskGraph::poison_from(const Node& root, const std::shared_ptr<const TaskFailure>& cause,
                            std::vector<TaskId>& out) {
    std::vector<TaskId> stack(root.successors.begin(), root.successors.end());
    while (!stack.empty()) {
        const TaskId id = stack.back();
        stack.pop_back();
        Node* found = nodes_.find(id);
        if (found == nullptr) continue;
        Node& n = *found;
        if (n.state != TaskState::PENDING && n.state != TaskState::READY) continue;
        n.cause = cause;
        finish(n, TaskState::POISONED);
        out.push_back(id);
        stack.insert(stack.end(), n.successors.begin(), n.successors.end());
    }
}

void TaskGraph::poison(TaskId task, const TaskFailure& cause, std::vector<TaskId>& poisoned) {
    Node& n = node(task);
    if (n.state != TaskState::PENDING && n.state != TaskState::READY) return;
    n.cause = std::make_shared<const TaskFailure>(cause);
    finish(n, TaskState::POISONED);
    poisoned.push_back(task);
    poison_from(n, n.cause, poisoned);
}

void TaskGraph::poison_unstarted(const TaskFailure& cause, std::vector<TaskId>& poisoned,
                                 const std::function<bool(TaskId)>& spare) {
    auto shared = std::make_shared<const TaskFailure>(cause);
    nodes_.for_each([&](TaskId id, Node& n) {
        if (n.state != TaskState::PENDING && n.state != TaskState::READY) return;
        if (spare && spare(id)) return;
        n.cause = shared;
        finish(n, TaskState::POISONED);
        poisoned.push_back(id);
    });
}

void TaskGraph::retire(TaskId task) {
    const bool found = nodes_.erase_if(task, [task](const Node& n) {
        if (!finished(n.state)) misuse("retirement of", task, n.state);
    });
    if (!found) throw std::logic_error("TaskGraph: unknown task " + std::to_string(task));
}

TaskState TaskGraph::state(TaskId task) const { return node(task).state; }

const TaskFailure* TaskGraph::failure(TaskId task) const { return node(task).cause.get(); }

}  // namespace simpler
