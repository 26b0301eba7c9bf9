// DispatchQueue: which ready tasks can go to which child right now.
//
// A ready item is a task with one member (a plain task) or N members (a group);
// each member targets one chip (worker index) or "any idle sub-worker". Items
// leave in ready order, each only when every member's target is free at once;
// a group's members are dispatched together and N sub-worker members take N
// distinct sub-workers. An item that cannot leave yet reserves the chips it
// names (and its count of sub-workers), so later items cannot starve it: a
// later item leaves ahead of it only when it needs none of what it reserved.
// Running tasks never wait on queued ones, so every reservation is released.
//
// Does not own: the children, the task graph. Not thread-safe: its owner
// (EngineCore) is driven under the Worker's engine mutex by whichever thread
// makes progress. Targets are checked on push (std::invalid_argument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "simpler/engine/task_graph.h"

namespace simpler {

inline constexpr int32_t ANY_SUB_WORKER = -1;

struct MemberTarget {
    int32_t chip = ANY_SUB_WORKER;  // a chip index, or ANY_SUB_WORKER
};

// One member sent to one child: the chip index, or the sub-worker chosen.
struct Assignment {
    TaskId task;
    uint32_t member;
    bool to_chip;
    uint32_t child;  // chip index when to_chip, else sub-worker index
};

class DispatchQueue {
public:
    DispatchQueue(uint32_t num_chips, uint32_t num_sub_workers);

    // Throws std::invalid_argument when `members` could never be dispatched by
    // this queue (see push); changes nothing.
    void check(TaskId task, std::span<const MemberTarget> members) const;
    // Queues a ready task. Throws std::invalid_argument when a chip index is out
    // of range, a group names one chip twice, or it needs more sub-workers than
    // exist (it could never leave).
    void push(TaskId task, std::span<const MemberTarget> members);

    // Marks a child free again after its task finished.
    void release_chip(uint32_t chip);
    void release_sub_worker(uint32_t sub_worker);
    // A dead child is never free again; items that need it stay queued (the
    // engine poisons them).
    void retire_chip(uint32_t chip);
    void retire_sub_worker(uint32_t sub_worker);

    // Appends every member that can be dispatched now, marking its child busy.
    void take(std::vector<Assignment>& out);

    // Removes a queued task (it was poisoned); false when it is not queued.
    bool drop(TaskId task);

    [[nodiscard]] size_t queued() const noexcept { return items_.size(); }
    [[nodiscard]] bool chip_free(uint32_t chip) const { return chip_state_.at(chip) == FREE; }
    [[nodiscard]] uint32_t free_sub_workers() const noexcept;
    [[nodiscard]] uint32_t live_sub_workers() const noexcept;

private:
    enum ChildState : uint8_t { FREE, BUSY, DEAD };
    struct Item {
        TaskId task;
        std::vector<MemberTarget> members;
        uint32_t sub_workers_needed;
    };

    std::deque<Item> items_;
    std::vector<ChildState> chip_state_;
    std::vector<ChildState> sub_state_;
    std::vector<uint8_t> reserved_;  // scratch of take(): chips reserved by earlier items
};

}  // namespace simpler
