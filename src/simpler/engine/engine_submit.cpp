// EngineCore's submit path: a member checked against the engine's rules and
// the owners' verdicts (refused with where and why, nothing recorded), a batch
// checked whole before any of it is recorded, and a task recorded, its edges
// inferred and, when ready, queued.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/backing/owner_path_table.h"
#include "simpler/engine/engine_core.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

namespace {

// "<identity> (owner L4/L3[0])": a refused buffer, with where it was made.
std::string buffer_name(const BufferDescriptor& d) {
    return d.identity.to_string() + " (owner " + owner_path_of(d) + ")";
}

std::string where(TaskId task, uint32_t member, size_t arg) {
    return "submit of task " + std::to_string(task) + " refused: member " + std::to_string(member) + ", argument " +
           std::to_string(arg);
}

}  // namespace

MemberTarget EngineCore::target_of(TaskKind kind, const MemberSubmit& m) const noexcept {
    if (kind == TaskKind::SUB) return MemberTarget::any(ChildKind::SUB_WORKER);
    return MemberTarget::of(config_.next_level, m.worker);
}

MemberTarget EngineCore::check_engine_rules(TaskId task, TaskKind kind, uint32_t member, const MemberSubmit& m) const {
    // The message prefix is built only on refusal: this runs on every submit.
    const auto refused = [task] { return "submit of task " + std::to_string(task) + " refused: "; };
    if (kind == TaskKind::SUB && m.worker)
        throw std::invalid_argument(refused() + "a sub task runs on any idle sub-worker and names no worker");
    if (kind == TaskKind::NEXT_LEVEL && !m.worker)
        throw std::invalid_argument(refused() + "member " + std::to_string(member) + " names no next-level worker");
    const MemberTarget target = target_of(kind, m);
    const auto k = static_cast<size_t>(target.kind);
    if (target.named()) {
        if (target.index() >= config_.children[k])
            throw std::invalid_argument(refused() + "member " + std::to_string(member) +
                                        " names worker=" + std::to_string(target.index()) + ", this Worker has " +
                                        std::to_string(config_.children[k]) + " next-level workers");
        if (const std::string& why = lost_[k][target.index()]; !why.empty())
            throw std::invalid_argument(refused() + "worker=" + std::to_string(target.index()) + " is lost (" + why +
                                        ")");
    } else if (queue_.live_count(target.kind) == 0) {
        throw std::invalid_argument(
            refused() + "no " + child_kind_name(target.kind) + " is alive" +
            (config_.children[k] == 0 ? std::string(" (this Worker has none)") : " (" + last_lost_[k] + ")"));
    }
    if (target.kind == ChildKind::CHIP && (m.args->tensor_count() > size_t{CHIP_MAX_TENSOR_ARGS} ||
                                           m.args->scalar_count() > size_t{CHIP_MAX_SCALAR_ARGS}))
        throw std::invalid_argument(
            refused() + "member " + std::to_string(member) + " has " + std::to_string(m.args->tensor_count()) +
            " tensors and " + std::to_string(m.args->scalar_count()) + " scalars; a chip takes at most " +
            std::to_string(CHIP_MAX_TENSOR_ARGS) + " and " + std::to_string(CHIP_MAX_SCALAR_ARGS));
    if (target.kind == ChildKind::WORKER && m.args->tensor_count() > CALL_CONFIG_WRITE_MASK_BITS)
        throw std::invalid_argument(
            refused() + "member " + std::to_string(member) + " has " + std::to_string(m.args->tensor_count()) +
            " tensors; a next-level Worker takes at most " + std::to_string(CALL_CONFIG_WRITE_MASK_BITS) +
            " (the call config's write mask says which ones the task writes)");
    m.args->check_access();
    if (!in_batch_) passed_.clear();
    for (size_t i = 0; i < m.args->tensor_count(); ++i) {
        const Tensor& t = m.args->tensor(i);
        const CanonicalIdentity& id = t.buffer.identity;
        // The owner's verdicts hold while the engine's lock is held: a
        // descriptor that passed both within this member (or this batch) is
        // not asked about again.
        if ((config_.descriptor_problem || config_.identity_problem) && !passed_.contains(t.buffer)) {
            if (config_.descriptor_problem) {
                if (std::string why = config_.descriptor_problem(t.buffer); !why.empty())
                    throw std::invalid_argument(where(task, member, i) + ", buffer " + buffer_name(t.buffer) + ": " +
                                                why);
            }
            if (config_.identity_problem) {
                if (std::string why = config_.identity_problem(id); !why.empty())
                    throw std::invalid_argument(where(task, member, i) + ", buffer " + buffer_name(t.buffer) + ": " +
                                                why);
            }
            passed_.add(t.buffer);
        }
        if (t.buffer.address_space != static_cast<uint8_t>(AddressSpace::DEVICE)) continue;
        if (t.buffer.backend_kind == static_cast<uint8_t>(BackendKind::VMM_WINDOW) && config_.window_problem) {
            // A window buffer goes to any chip of its domain (peers read and write each other's windows).
            const bool chip = target.kind == ChildKind::CHIP;
            const bool sub = target.kind == ChildKind::SUB_WORKER;
            const std::string who =
                chip ? "chip " + std::to_string(target.index())
                     : (sub ? std::string("a host sub-worker") : ChildRef{target.kind, target.index()}.name());
            const ChildRef ref{target.kind, sub ? 0 : target.index()};
            if (std::optional<std::string> why = config_.window_problem(t.buffer, ref, who)) {
                if (!why->empty())
                    throw std::invalid_argument(where(task, member, i) + ", buffer " + buffer_name(t.buffer) + ": " +
                                                *why);
                continue;
            }
        }
        if (target.kind == ChildKind::SUB_WORKER)
            throw std::invalid_argument(where(task, member, i) + ", buffer " + buffer_name(t.buffer) +
                                        ": a Python sub-worker takes HOST tensors only (this one is DEVICE memory)");
        std::optional<uint32_t> owner = config_.device_owner ? config_.device_owner(id) : std::nullopt;
        if (!owner)
            throw std::invalid_argument(where(task, member, i) + ", buffer " + buffer_name(t.buffer) +
                                        ": DEVICE buffer unknown to this Worker");
        if (target.kind != ChildKind::CHIP || *owner != target.index())
            throw std::invalid_argument(
                where(task, member, i) + ", buffer " + buffer_name(t.buffer) + ": DEVICE memory of " +
                ChildRef{ChildKind::CHIP, *owner}.name() +
                " may only be dispatched to that chip, not to worker=" + std::to_string(target.index()));
    }
    return target;
}

void EngineCore::check_members(TaskId task, TaskKind kind, std::span<const MemberSubmit> members, bool rules) {
    if (members.empty()) throw std::invalid_argument("submit of task " + std::to_string(task) + " refused: no members");
    std::vector<TaskMember>& tracked = submit_tracked_;
    std::vector<MemberTarget>& targets = submit_targets_;
    tracked.clear();
    targets.clear();
    for (uint32_t m = 0; m < members.size(); ++m) {
        if (members[m].args == nullptr)
            throw std::invalid_argument("submit: member " + std::to_string(m) + " has no TaskArgs");
        const MemberTarget target = rules ? check_engine_rules(task, kind, m, members[m]) : target_of(kind, members[m]);
        // A DEVICE tensor is keyed under the chip that owns it (check_engine_rules
        // admits DEVICE tensors on chip members only).
        const int32_t scope = target.kind == ChildKind::CHIP ? static_cast<int32_t>(target.index()) : HOST_SCOPE;
        tracked.push_back(
            {members[m].args->tensors(), members[m].args->tags(), scope, target.kind == ChildKind::WORKER});
        targets.push_back(target);
    }
    // One member's target was checked whole above (a named child of this Worker and not
    // lost, or a live child of its kind): what the group checks below ask of a group.
    if (!rules || members.size() == 1) return;
    // A group wider than the live children of a kind: name why the missing ones went.
    std::array<uint32_t, CHILD_KIND_COUNT> any{};
    for (const MemberTarget& t : targets)
        if (!t.named()) ++any[static_cast<size_t>(t.kind)];
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        const auto child_kind = static_cast<ChildKind>(k);
        if (any[k] > queue_.live_count(child_kind) && !last_lost_[k].empty())
            throw std::invalid_argument("submit of task " + std::to_string(task) + " refused: the group needs " +
                                        std::to_string(any[k]) + " " + child_kind_name(child_kind) +
                                        "(s) at once, the Worker has " + std::to_string(queue_.live_count(child_kind)) +
                                        " alive (" + last_lost_[k] + ")");
    }
    queue_.check(task, targets);  // impossible targets are refused before anything is recorded
}

void EngineCore::check_submit(TaskId task, TaskKind kind, std::span<const MemberSubmit> members) {
    check_members(task, kind, members, true);
    tracker_.check(task, submit_tracked_);
}

std::optional<BatchCheckRefusal> EngineCore::check_batch(TaskId first, TaskKind kind, BatchSource& tasks,
                                                         const BatchRule& also) {
    struct Scope {
        EngineCore& e;
        explicit Scope(EngineCore& core) : e(core) {
            e.passed_.clear();
            e.in_batch_ = true;
        }
        ~Scope() {
            e.in_batch_ = false;
            e.passed_.clear();
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    } scope(*this);
    for (size_t i = 0; i < tasks.size(); ++i) {
        try {
            const MemberSubmit& task = tasks.task(i);
            if (also)
                if (std::string why = also(task); !why.empty()) return BatchCheckRefusal{i, std::move(why)};
            check_submit(first + i, kind, {&task, 1});
        } catch (const std::invalid_argument& e) {
            return BatchCheckRefusal{i, e.what()};
        }
    }
    return std::nullopt;
}

TaskHandle EngineCore::submit(TaskKind kind, uint64_t callable, std::span<const MemberSubmit> members,
                              const TaskConfig& config, bool checked) {
    const TaskId task = next_task_;
    check_members(task, kind, members, !checked);
    const std::vector<TaskMember>& tracked = submit_tracked_;
    const std::vector<MemberTarget>& targets = submit_targets_;

    Record& record = records_.insert(task);
    std::span<const TaskId> preds;
    try {
        record.kind = kind;
        record.run = run_;
        record.callable = callable;
        record.members = static_cast<uint32_t>(members.size());
        if (!targets.empty()) record.target0 = targets.front();
        if (members.size() > 1) {
            record.group_targets.assign(targets.begin(), targets.end());
            if (record.rest.size() < members.size() - 1) record.rest.resize(members.size() - 1);
        }
        record.undispatched = static_cast<uint32_t>(members.size());
        for (size_t i = 0; i < members.size(); ++i) {
            const TaskArgs& args = *members[i].args;
            std::vector<std::byte>& blob = record.blob(i);
            blob.resize(blob_size(args));
            write_blob(args, blob);
            TaskConfig& c = record.config(i);
            c = config;
            set_write_mask(c, args.tags());
            for (const Tensor& t : args.tensors())
                if (std::find(record.names.begin(), record.names.end(), t.buffer.identity) == record.names.end())
                    record.names.push_back(t.buffer.identity);
        }
        preds = tracker_.submit(task, tracked, checked);  // throws, recording nothing, on refusal
    } catch (...) {
        records_.erase(task);
        throw;
    }
    ++next_task_;
    count_users(record);
    if (config_.record_edges) {
        edge_log_.append(tracker_.edges_into(task));
    }
    const TaskState state = graph_.add(task, preds);
    live_order_.push_back(task);
    ++run_of(run_).unfinished;
    if (state == TaskState::READY) {
        queue_.push_checked(task, targets);  // check_members (or check_batch) checked them
    } else if (state == TaskState::PENDING && chains() && chainable(record)) {
        record.preds.assign(preds.begin(), preds.end());
        chain_candidates_.push_back(task);
    } else if (state == TaskState::POISONED) {
        account_poisoned(task);
        finish_task(task);
    }
    return TaskHandle{task, run_};
}

}  // namespace simpler
