#include "simpler/deps/dependency_tracker.h"

#include <stdexcept>
#include <string>

#include "simpler/deps/submit_checks.h"

namespace simpler {

DependencyTracker::DependencyTracker(TrackerConfig config) : config_(config) {}

void DependencyTracker::TaskState::reset() noexcept {
    id = 0;
    entries.clear();
    edges.clear();
    stamp = 0;
    stamp_edge = 0;
}

std::span<const TaskId> DependencyTracker::submit(TaskId task, std::span<const Tensor> tensors,
                                                  std::span<const TensorArgType> tags, int32_t target_chip) {
    const TaskMember member{tensors, tags, target_chip};
    return submit(task, std::span<const TaskMember>(&member, 1));
}

void DependencyTracker::lay_out_boxes(std::span<const TaskMember> members) {
    member_box_base_.clear();
    size_t total = 0;
    for (const TaskMember& m : members) {
        member_box_base_.push_back(total);
        total += m.tensors.size();
    }
    if (boxes_.size() < total) {
        boxes_.resize(total);
        arg_keys_.resize(total);
    }
}

void DependencyTracker::check(TaskId task, std::span<const TaskMember> members) {
    check_members(task, members, /*fill_boxes=*/false);
}

void DependencyTracker::check_members(TaskId task, std::span<const TaskMember> members, bool fill_boxes) {
    lay_out_boxes(members);
    for (size_t m = 0; m < members.size(); ++m) {
        const std::span<ViewBox> boxes(boxes_.data() + member_box_base_[m], members[m].tensors.size());
        SubmitRefusal r = check_member(static_cast<uint32_t>(m), members[m], boxes, config_.overlap,
                                       config_.validate_tensors, fill_boxes);
        if (!r.ok()) throw std::invalid_argument(format_refusal(task, r, members[m]));
    }
}

void DependencyTracker::compute_boxes(std::span<const TaskMember> members) {
    lay_out_boxes(members);
    for (size_t m = 0; m < members.size(); ++m)
        for (size_t i = 0; i < members[m].tensors.size(); ++i)
            if (members[m].tags[i] != TensorArgType::NO_DEP)
                boxes_[member_box_base_[m] + i] = make_view_box(members[m].tensors[i]);
}

// Inlined into submit()'s two passes: out of line, a submit paid a call and
// its frame for each (1% of an empty task's engine round trip).
template <class F>
[[gnu::always_inline]] inline void DependencyTracker::for_each_ordered_argument(std::span<const TaskMember> members,
                                                                                F&& f) const {
    for (size_t m = 0; m < members.size(); ++m) {
        const TaskMember& member = members[m];
        for (size_t i = 0; i < member.tensors.size(); ++i) {
            const TensorArgType tag = member.tags[i];
            if (!tag_reads(tag) && !tag_writes(tag)) continue;
            const Tensor& t = member.tensors[i];
            f(static_cast<uint32_t>(m), static_cast<uint32_t>(i),
              Key{t.buffer.identity, argument_scope(t, member.target_chip)}, member_box_base_[m] + i, tag);
        }
    }
}

std::span<const TaskId> DependencyTracker::submit(TaskId task, std::span<const TaskMember> members, bool checked) {
    if (task == 0) throw std::invalid_argument("submit of task 0 refused: task ids are nonzero");
    // Nothing is recorded until every member passed and the id is known not live.
    if (checked) {
        compute_boxes(members);
    } else {
        check_members(task, members, /*fill_boxes=*/true);
    }
    // The task's state is filed now (no lookup below reads it: it has no entries yet).
    TaskState* const filed = tasks_.try_insert(task);
    if (filed == nullptr)
        throw std::invalid_argument("submit of task " + std::to_string(task) +
                                    " refused: the task id is live (submitted and not completed)");
    TaskState& state = *filed;
    state.id = task;

    // Lookups of every member before any entry is recorded (they change
    // nothing but scratch; should one fail to allocate, the task is not filed).
    ++stamp_;
    preds_.clear();
    edges_.clear();
    superseded_.clear();
    try {
        for_each_ordered_argument(members, [&](uint32_t m, uint32_t i, const Key& key, size_t at, TensorArgType tag) {
            arg_keys_[at] = look_up(task, m, i, key, boxes_[at], tag);
        });
    } catch (...) {
        (void)tasks_.erase(task);
        throw;
    }

    // Record: superseded entries leave, then the node's own entries are filed.
    for (uint32_t id : superseded_)
        if (entries_[id].key != nullptr) remove_entry(id);
    for_each_ordered_argument(members, [&](uint32_t m, uint32_t i, const Key& key, size_t at, TensorArgType tag) {
        record(state, m, i, arg_keys_[at], key, boxes_[at], tag);
    });
    if (config_.record_explanations) state.edges.assign(edges_.begin(), edges_.end());
    return preds_;
}

DependencyTracker::KeyState* DependencyTracker::look_up(TaskId task, uint32_t member, uint32_t arg, const Key& key,
                                                        const ViewBox& box, TensorArgType tag) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    const bool writes = tag_writes(tag);
    auto visit = [&](const ViewIndex::Item& item, bool entry_writes) {
        const Entry& e = entries_[item.id];
        const OverlapAnswer answer = overlap(box, e.box, config_.overlap);
        if (answer.overlap == TensorOverlap::NONE) return;
        const EdgeKind kind = !writes        ? EdgeKind::READ_AFTER_WRITE
                              : entry_writes ? EdgeKind::WRITE_AFTER_WRITE
                                             : EdgeKind::WRITE_AFTER_READ;
        add_edge(task, member, arg, tag, e, kind, answer, key);
        if (writes && answer.overlap == TensorOverlap::COVERED) superseded_.push_back(item.id);
    };
    it->second.writers.for_each_candidate(box, [&](const ViewIndex::Item& item) { visit(item, true); });
    if (writes) it->second.readers.for_each_candidate(box, [&](const ViewIndex::Item& item) { visit(item, false); });
    return &it->second;
}

void DependencyTracker::add_edge(TaskId task, uint32_t member, uint32_t arg, TensorArgType tag, const Entry& e,
                                 EdgeKind kind, const OverlapAnswer& answer, const Key& key) {
    TaskState& pred = *e.task;
    const bool known = pred.stamp == stamp_;
    if (known && !config_.record_explanations) return;
    if (known) {
        EdgeExplanation& prior = edges_[pred.stamp_edge];
        if (prior.proven() || is_fallback(answer)) return;  // keep the first proven reason
    } else {
        pred.stamp = stamp_;
        preds_.push_back(pred.id);
        if (!config_.record_explanations) return;
        pred.stamp_edge = static_cast<uint32_t>(edges_.size());
        edges_.emplace_back();
    }
    EdgeExplanation& x = edges_[pred.stamp_edge];
    x.predecessor = pred.id;
    x.successor = task;
    x.kind = kind;
    x.successor_member = member;
    x.successor_arg = arg;
    x.predecessor_member = e.member;
    x.predecessor_arg = e.arg;
    x.successor_tag = tag;
    x.predecessor_tag = e.tag;
    x.identity = key.identity;
    x.scope = key.scope;
    x.answer = answer;
}

namespace {

// Reuses a freed slot of `slots` when there is one, else appends one; returns its index.
template <typename T>
uint32_t take_slot(std::vector<T>& slots, std::vector<uint32_t>& free_slots) {
    if (!free_slots.empty()) {
        const uint32_t id = free_slots.back();
        free_slots.pop_back();
        return id;
    }
    slots.emplace_back();
    return static_cast<uint32_t>(slots.size() - 1);
}

}  // namespace

void DependencyTracker::record(TaskState& task, uint32_t member, uint32_t arg, KeyState* known, const Key& key,
                               const ViewBox& box, TensorArgType tag) {
    // A key found by the lookups is still live: supersession never empties a key
    // it files into, and keys are erased only by complete().
    KeyState* state = known != nullptr ? known : &keys_.try_emplace(key, key, &pool_).first->second;
    const uint32_t id = take_slot(entries_, free_entries_);
    Entry& e = entries_[id];
    e.box = box;
    e.key = state;
    e.task = &task;
    e.member = member;
    e.arg = arg;
    e.tag = tag;
    e.writer = tag_writes(tag);
    (e.writer ? e.key->writers : e.key->readers).insert(id, box);
    task.entries.push_back(EntryRef{id, e.generation});
}

void DependencyTracker::remove_entry(uint32_t id) {
    Entry& e = entries_[id];
    (e.writer ? e.key->writers : e.key->readers).erase(id, e.box);
    e.key = nullptr;
    ++e.generation;
    free_entries_.push_back(id);
}

void DependencyTracker::complete(TaskId task) {
    TaskState* s = tasks_.find(task);
    if (s == nullptr) throw std::out_of_range("complete of task " + std::to_string(task) + ": the task is not live");
    for (const EntryRef& ref : s->entries) {
        Entry& e = entries_[ref.id];
        if (e.generation != ref.generation || e.key == nullptr) continue;  // superseded earlier
        KeyState* key = e.key;
        remove_entry(ref.id);
        if (key->writers.empty() && key->readers.empty()) {
            const Key name = key->name;
            keys_.erase(name);
        }
    }
    (void)tasks_.erase(task);
}

std::optional<EdgeExplanation> DependencyTracker::explain(TaskId pred, TaskId succ) const {
    for (const EdgeExplanation& x : edges_into(succ))
        if (x.predecessor == pred) return x;
    return std::nullopt;
}

std::span<const EdgeExplanation> DependencyTracker::edges_into(TaskId succ) const {
    const TaskState* s = tasks_.find(succ);
    if (s == nullptr) return {};
    return s->edges;
}

}  // namespace simpler
