// DispatchQueue: which ready tasks can go to which child right now.
//
// A ready item is a task with one member (a plain task) or N members (a group);
// each member targets one named child (a chip, a next-level worker) or "any idle
// child of a kind" (a sub-worker). Items leave in ready order, each only when
// every member's target is free at once; a group's members are dispatched
// together and N "any" members of one kind take N distinct children. An item
// that cannot leave yet reserves the children it names (and its count of "any"
// children per kind), so later items cannot starve it: a later item leaves
// ahead of it only when it needs none of what it reserved (a member of a kind,
// named or not, leaves only while that kind has a free child beyond the waiting
// items' "any" claims). Running tasks never
// wait on queued ones, so every reservation is released.
//
// A one-member item waits in the queue of its target (one per named child, one
// per kind for "any"), groups in a queue of their own; take() merges the queues'
// heads in ready order. Every item of a one-member queue needs exactly what its
// head needs, so a head that cannot leave closes its queue for that take: a take
// costs what leaves, the groups and the number of targets, never the number of
// waiting one-member items (a long queue for a busy child costs nothing).
//
// Does not own: the children, the task graph. Not thread-safe: its owner
// (EngineCore) is driven under the Worker's engine mutex by whichever thread
// makes progress. Targets are checked on push (std::invalid_argument).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "simpler/engine/child_ref.h"
#include "simpler/engine/task_graph.h"

namespace simpler {

// How many children of each kind a Worker has, indexed by ChildKind.
using ChildCounts = std::array<uint32_t, CHILD_KIND_COUNT>;

// One member sent to one child.
struct Assignment {
    TaskId task;
    uint32_t member;
    ChildRef child;
};

class DispatchQueue {
public:
    explicit DispatchQueue(const ChildCounts& children);

    // Throws std::invalid_argument when `members` could never be dispatched by
    // this queue (see push); changes nothing.
    void check(TaskId task, std::span<const MemberTarget> members) const;
    // Queues a ready task. Throws std::invalid_argument when a named child is out
    // of range, a group names one child twice, or it needs more "any" children
    // of a kind than are alive (it could never leave).
    void push(TaskId task, std::span<const MemberTarget> members);
    // push() of members that check() passed with no child retired since: the
    // check is not run twice (EngineCore::submit checks before it records).
    void push_checked(TaskId task, std::span<const MemberTarget> members);

    // Marks a child free again after its task finished.
    void release(ChildRef child);
    // A dead child is never free again; items that need it stay queued (the
    // engine poisons them).
    void retire(ChildRef child);

    // Appends every member that can be dispatched now, marking its child busy.
    void take(std::vector<Assignment>& out);
    // The oldest one-member item naming `child` while that child is BUSY (its
    // lane can hold a task behind the one it runs), removed from the queue;
    // nullopt when there is none, the child is FREE or DEAD, or an earlier
    // item could take the child once it is free (an "any" item of its kind, a
    // group naming it or an "any" member of its kind): no item passes one that
    // waits for the same child. The child stays BUSY.
    std::optional<TaskId> take_behind(ChildRef child);
    // Marks FREE `child` BUSY for a task handed to it outside the queue (one
    // that waits on its lane for producers on other lanes), when no queued
    // item could take it (as take_behind: none names it, none wants any child
    // of its kind); false, changing nothing, otherwise.
    bool claim(ChildRef child);

    // Removes a queued task (it was poisoned); false when it is not queued.
    bool drop(TaskId task);

    [[nodiscard]] size_t queued() const noexcept { return queued_; }
    // Whether a queued item has a member that names `child`.
    [[nodiscard]] bool names(ChildRef child) const noexcept;
    [[nodiscard]] bool free(ChildRef child) const { return pool(child.kind).state.at(child.index) == FREE; }
    [[nodiscard]] uint32_t free_count(ChildKind kind) const noexcept { return pool(kind).free; }
    [[nodiscard]] uint32_t live_count(ChildKind kind) const noexcept { return pool(kind).live; }

private:
    enum ChildState : uint8_t { FREE, BUSY, DEAD };
    struct Pool {
        std::vector<ChildState> state;  // per child of the kind
        // Scratch of take(): a child named by an earlier item that waits holds
        // that take's stamp (no clearing per take).
        std::vector<uint32_t> reserved;
        uint32_t free = 0;  // children FREE, kept with `state`
        uint32_t live = 0;  // children not DEAD
    };
    // A queued one-member task: its target is its queue's.
    struct Single {
        TaskId task;
        uint64_t ready;  // ready order over every queue
    };
    // One target's one-member items, in ready order: items_[head_, size()).
    // A vector keeps its storage between batches (a std::deque allocates and
    // frees a block every few items).
    struct SingleQueue {
        MemberTarget target;
        std::vector<Single> items;
        size_t head = 0;
        [[nodiscard]] bool empty() const noexcept { return head == items.size(); }
        [[nodiscard]] const Single& front() const noexcept { return items[head]; }
        // Drops the front (amortized O(1) per item: see compact).
        void pop_front() noexcept;
        // Empties the vector once nothing is left, or drops the left prefix once
        // it is half the vector.
        void compact() noexcept;
        // Removes the item of `task`; false when it is not here.
        bool erase(TaskId task);
    };
    struct Group {
        TaskId task;
        uint64_t ready;
        std::vector<MemberTarget> members;                  // two or more
        std::array<uint32_t, CHILD_KIND_COUNT> any_needed;  // "any" members per kind
    };
    // A queue's head offered to take()'s merge: `source` is a SingleQueue's
    // index, or GROUPS with `group` the index into groups_.
    struct Head {
        uint64_t ready;
        uint32_t source;
        uint32_t group;
    };
    static constexpr uint32_t GROUPS = UINT32_MAX;

    [[nodiscard]] Pool& pool(ChildKind k) noexcept { return pools_[static_cast<size_t>(k)]; }
    [[nodiscard]] const Pool& pool(ChildKind k) const noexcept { return pools_[static_cast<size_t>(k)]; }
    // Moves child `index` of `p` to state `to`, keeping the pool's counts.
    static void set_state(Pool& p, uint32_t index, ChildState to) noexcept;
    // The SingleQueue of a one-member item's target.
    [[nodiscard]] uint32_t queue_of(const MemberTarget& t) const noexcept {
        const auto k = static_cast<size_t>(t.kind);
        return t.named() ? named_base_[k] + t.index() : any_queue_[k];
    }

    // any_queue_[k], then named_base_[k] + i for child i of kind k.
    std::vector<SingleQueue> singles_;
    std::array<uint32_t, CHILD_KIND_COUNT> any_queue_{};
    std::array<uint32_t, CHILD_KIND_COUNT> named_base_{};
    std::vector<Group> groups_;  // in ready order
    size_t queued_ = 0;
    uint64_t next_ready_ = 0;
    std::vector<Head> heads_;  // take()'s merge heap (kept: no allocation per take)
    std::array<Pool, CHILD_KIND_COUNT> pools_;
    uint32_t take_stamp_ = 0;  // the current take()'s stamp in Pool::reserved (never 0 there)
};

}  // namespace simpler
