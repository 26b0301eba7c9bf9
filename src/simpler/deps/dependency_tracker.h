// DependencyTracker: the graph core. Given each submitted node's members, their
// tensor arguments and tags, it yields the node's predecessors by the rules of
// docs/explanation/dependencies.md: read after write, write after write, write after read, per
// byte region, decided by overlap(); a write that COVERS an earlier entry
// supersedes it; a task's entries leave when the task completes.
//
// Keying: every entry is filed under the full canonical identity of its backing
// plus a scope (HOST_SCOPE, WINDOW_SCOPE, or the owner chip of a DEVICE backing), never under
// a hash or an address. Per key, writers and readers each live in a ViewIndex
// (byte ranges, and 2-D tiles by rows x columns); stage 2 of the overlap
// question runs only on the entries it yields.
//
// Groups: one node, N members. Members are not compared with each other; all
// members' lookups run before any member's entries are recorded.
//
// Refusal: submit() first runs submit_checks.h on every member and refuses a
// node that fails (std::invalid_argument naming the task, member, argument
// indices, buffer and rule) without changing anything.
//
// Does not own: the tensors (copied into entries as ViewBoxes), scheduling,
// completion order. Not thread-safe: one builder thread owns it. Trusts nothing
// in a member; trusts its caller to complete() only tasks it submitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "simpler/deps/edge_explanation.h"
#include "simpler/deps/node_pool.h"
#include "simpler/deps/task_member.h"
#include "simpler/deps/task_table.h"
#include "simpler/view/view_box.h"
#include "simpler/view/view_index.h"
#include "simpler/view/wire_overlap.h"

namespace simpler {

struct TrackerConfig {
    OverlapOptions overlap;           // passed to every overlap() the tracker asks
    bool record_explanations = true;  // keep an EdgeExplanation per edge until the successor completes
    bool validate_tensors = true;     // run validate_tensor on every argument at submit
};

class DependencyTracker {
public:
    explicit DependencyTracker(TrackerConfig config = {});
    DependencyTracker(const DependencyTracker&) = delete;
    DependencyTracker& operator=(const DependencyTracker&) = delete;

    // Submits node `task` (a nonzero task id not live in this tracker) with its members
    // and returns its predecessors: distinct live task ids, in the order first
    // found. The span stays valid until the next call of a non-const member.
    // Throws std::invalid_argument (nothing recorded) when a submit check fails,
    // `task` is 0 or `task` is already live.
    // checked: check(task, members) passed for these very members (a batch
    // checked whole first): the checks are not run again, only the views'
    // boxes are computed.
    std::span<const TaskId> submit(TaskId task, std::span<const TaskMember> members, bool checked = false);
    // The checks of submit() alone (they depend on the members only, not on
    // what is live): throws what submit(task, members) would refuse with for
    // them, records nothing.
    void check(TaskId task, std::span<const TaskMember> members);
    std::span<const TaskId> submit(TaskId task, std::span<const Tensor> tensors, std::span<const TensorArgType> tags,
                                   int32_t target_chip = HOST_SCOPE);

    // Retires `task`: its entries leave the tracker (nothing submitted later can
    // depend on a completed task) and its explanations are dropped. Throws
    // std::out_of_range when `task` is not live.
    void complete(TaskId task);

    // Why the edge pred -> succ exists; empty when there is no such edge or succ
    // has completed. When several argument pairs gave the edge, a proven one
    // (COVERED or SHARED_BYTES) is kept over a fallback.
    [[nodiscard]] std::optional<EdgeExplanation> explain(TaskId pred, TaskId succ) const;
    // Every edge into `succ` (empty when succ is not live or explanations are off).
    [[nodiscard]] std::span<const EdgeExplanation> edges_into(TaskId succ) const;

    [[nodiscard]] bool is_live(TaskId task) const { return tasks_.contains(task); }
    [[nodiscard]] size_t live_tasks() const noexcept { return tasks_.size(); }
    [[nodiscard]] size_t live_entries() const noexcept { return entries_.size() - free_entries_.size(); }
    [[nodiscard]] size_t live_keys() const noexcept { return keys_.size(); }

private:
    // check() of every member; with fill_boxes (submit's own check) the
    // members' boxes are left in boxes_ for the lookups, without only those
    // the pairwise rule compared are computed.
    void check_members(TaskId task, std::span<const TaskMember> members, bool fill_boxes);
    // The view boxes of every member's tensors into boxes_ (member i's from
    // member_box_base_[i]), with no check: check() has passed them.
    void compute_boxes(std::span<const TaskMember> members);
    // Sizes boxes_ / arg_keys_ for every tensor of `members` and records where
    // each member's boxes start (member_box_base_).
    void lay_out_boxes(std::span<const TaskMember> members);
    struct Key {
        CanonicalIdentity identity;
        int32_t scope;
        friend bool operator==(const Key& a, const Key& b) noexcept {
            return a.scope == b.scope && a.identity == b.identity;
        }
    };
    struct KeyHash {
        size_t operator()(const Key& k) const noexcept {
            return static_cast<size_t>(k.identity.hash() ^ (uint64_t(uint32_t(k.scope)) * 0x9e3779b97f4a7c15ULL));
        }
    };
    struct KeyState {
        KeyState(const Key& k, std::pmr::memory_resource* memory) : name(k), writers(memory), readers(memory) {}
        Key name;
        ViewIndex writers;
        ViewIndex readers;
    };
    struct TaskState;
    struct Entry {
        ViewBox box;
        KeyState* key = nullptr;  // null when the slot is free
        TaskState* task = nullptr;  // its task's state (a TaskTable slot: stays put while the task lives)
        uint32_t generation = 0;  // bumped when the slot is freed
        uint32_t member = 0;
        uint32_t arg = 0;
        TensorArgType tag = TensorArgType::INPUT;
        bool writer = false;
    };
    struct EntryRef {
        uint32_t id;
        uint32_t generation;
    };
    // A live task's state, in a pooled slot (task_table.h): reset() empties it
    // for the next task and keeps its vectors' capacity.
    struct TaskState {
        TaskId id = 0;
        std::vector<EntryRef> entries;
        std::vector<EdgeExplanation> edges;  // edges into this task
        uint64_t stamp = 0;                  // submit during which this task was last added as a predecessor
        uint32_t stamp_edge = 0;             // index of that edge in the successor's explanations
        void reset() noexcept;
    };

    // Returns the key's state, or null when the key has no live entry.
    KeyState* look_up(TaskId task, uint32_t member, uint32_t arg, const Key& key, const ViewBox& box,
                      TensorArgType tag);
    void add_edge(TaskId task, uint32_t member, uint32_t arg, TensorArgType tag, const Entry& e, EdgeKind kind,
                  const OverlapAnswer& answer, const Key& key);
    // Calls f(member, arg, key, at, tag) for every argument of `members` that
    // reads or writes (NO_DEP takes no part), `at` its index in boxes_.
    template <class F>
    void for_each_ordered_argument(std::span<const TaskMember> members, F&& f) const;
    void record(TaskState& task, uint32_t member, uint32_t arg, KeyState* known, const Key& key, const ViewBox& box,
                TensorArgType tag);
    void remove_entry(uint32_t id);

    TrackerConfig config_;
    NodePool pool_;  // index and key nodes
    std::pmr::unordered_map<Key, KeyState, KeyHash> keys_{&pool_};
    std::vector<Entry> entries_;
    std::vector<uint32_t> free_entries_;
    TaskTable<TaskState> tasks_;  // the live tasks
    uint64_t stamp_ = 0;

    // Scratch of one submit.
    std::vector<ViewBox> boxes_;
    std::vector<KeyState*> arg_keys_;  // per argument, the key state found by its lookup
    std::vector<size_t> member_box_base_;
    std::vector<TaskId> preds_;
    std::vector<EdgeExplanation> edges_;
    std::vector<uint32_t> superseded_;
};

}  // namespace simpler
