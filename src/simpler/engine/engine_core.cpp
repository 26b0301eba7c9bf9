#include "simpler/engine/engine_core.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "simpler/backing/owner_path_table.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

namespace {

EngineConfig with_tracker_settings(EngineConfig c) {
    c.tracker.record_explanations = c.record_edges;
    c.tracker.validate_tensors = false;  // TaskArgs::add_tensor validated every tensor
    return c;
}

}  // namespace

EngineCore::EngineCore(EngineConfig config)
    : config_(with_tracker_settings(std::move(config))), tracker_(config_.tracker), queue_(config_.children) {
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) lost_[k].resize(config_.children[k]);
    chip_flight_.resize(config_.children[static_cast<size_t>(ChildKind::CHIP)]);
}

void EngineCore::Record::reset() noexcept {
    kind = TaskKind::SUB;
    run = 0;
    callable = 0;
    members = 0;
    target0 = MemberTarget{};
    config0 = TaskConfig{};
    blob0.clear();  // kept, with its capacity, for the next task
    for (GroupMember& m : rest) {
        m.config = TaskConfig{};
        m.blob.clear();  // kept, with their capacity, for the next group's members
    }
    group_targets.clear();
    outstanding = 0;
    undispatched = 0;
    failed = false;
    chained = false;
    preds.clear();
    names.clear();
}

EngineCore::Record& EngineCore::record(TaskId task) {
    Record* r = records_.find(task);
    if (r == nullptr) throw std::logic_error("EngineCore: no record of task " + std::to_string(task));
    return *r;
}

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
        const std::span<const EdgeExplanation> edges = tracker_.edges_into(task);
        edge_log_.insert(edge_log_.end(), edges.begin(), edges.end());
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

void EngineCore::take(std::vector<Dispatch>& out) {
    std::vector<Assignment>& assigned = take_scratch_;
    assigned.clear();
    queue_.take(assigned);
    for (const Assignment& a : assigned) {
        Record& r = record(a.task);
        (void)graph_.start_if_ready(a.task);  // a chained task started when its producers completed
        --r.undispatched;
        ++r.outstanding;
        out.push_back(
            {TaskHandle{a.task, r.run}, r.kind, a.member, a.child, r.callable, r.blob(a.member), &r.config(a.member)});
        if (chains() && a.child.kind == ChildKind::CHIP) chip_member_started(a.task, a.child);
    }
    if (!chain_candidates_.empty()) take_chained(out);
}

void EngineCore::member_finished(const Dispatch& d, const std::string& error) {
    const TaskId task = d.task.id;
    if (chains() && d.child.kind == ChildKind::CHIP) {
        chip_member_done(task, d.child);
    } else {
        queue_.release(d.child);
    }
    Record& r = record(task);
    --r.outstanding;
    if (graph_.state(task) == TaskState::POISONED) {
        // A chained task whose producer failed: poisoned (and counted) then;
        // its lane skipped it, or lost it with the producer.
        if (r.outstanding == 0 && r.undispatched == 0) finish_task(task);
        return;
    }
    if (!error.empty() && !r.failed) {
        r.failed = true;
        auto root = std::make_shared<const RunFailure>(
            RunFailure{d.task, r.kind, r.callable, d.member, MemberTarget::child(d.child), error, nullptr});
        note_failure(*root);
        failed_roots_[task] = std::move(root);
        scratch_.clear();
        graph_.fail(task, error, scratch_);
        on_poisoned(scratch_);
    }
    if (r.outstanding > 0 || r.undispatched > 0) return;
    if (!r.failed) {
        // Successors still waiting may now wait only on tasks in flight on their chip.
        if (chains()) note_chain_candidates(task);
        scratch_.clear();
        graph_.complete(task, scratch_);
        on_ready(scratch_);
        finish_task(task, TaskState::DONE, &r);
        return;
    }
    finish_task(task);
}

void EngineCore::on_ready(std::span<const TaskId> ready) {
    for (TaskId t : ready) {
        Record& r = record(t);
        if (r.chained) {
            r.chained = false;  // already on its chip, behind the producers that just completed
            graph_.start(t);
        } else {
            queue_.push(t, r.targets());
        }
    }
}

void EngineCore::on_poisoned(std::span<const TaskId> poisoned) {
    const std::vector<TaskId> copy(poisoned.begin(), poisoned.end());
    for (TaskId t : copy) {
        queue_.drop(t);
        account_poisoned(t);
        // A chained task on its chip finishes when its lane reports it (skipped).
        if (const Record* r = records_.find(t); r != nullptr && r->outstanding > 0) continue;
        finish_task(t);
    }
}

void EngineCore::account_poisoned(TaskId task) {
    ++poisoned_count_;
    const Record* found = records_.find(task);
    if (found == nullptr) return;
    const Record& r = *found;
    RunState& run = run_of(r.run);
    ++run.poisoned;
    if (run.first_failure) return;
    RunFailure f{TaskHandle{task, r.run}, r.kind, r.callable, 0, r.targets().front(), {}, nullptr};
    const TaskFailure* cause = graph_.failure(task);
    const auto root = cause != nullptr ? failed_roots_.find(cause->task) : failed_roots_.end();
    if (root != failed_roots_.end() && root->second->task.run != r.run) {
        f.message = "not run: it needs what " + root->second->task.name() + " failed to produce";
        f.cause = root->second;
    } else {
        f.message = "not run: " + (cause != nullptr ? cause->message : std::string("a task it needs failed"));
    }
    run.first_failure = std::move(f);
}

void EngineCore::note_failure(const RunFailure& f) {
    if (!first_failure_) first_failure_ = f;
    RunState& run = run_of(f.task.run);
    if (!run.first_failure) run.first_failure = f;
}

RunState& EngineCore::run_of(uint64_t run) {
    if (last_run_ != nullptr && last_run_id_ == run) return *last_run_;
    auto it = runs_.lower_bound(run);
    if (it == runs_.end() || it->first != run) {
        if (spare_run_.empty()) {
            it = runs_.emplace_hint(it, run, RunState{});
        } else {
            spare_run_.key() = run;
            spare_run_.mapped().reset();
            it = runs_.insert(it, std::move(spare_run_));
        }
    }
    last_run_id_ = run;
    last_run_ = &it->second;
    return it->second;
}

std::map<uint64_t, RunState>::iterator EngineCore::drop_run(std::map<uint64_t, RunState>::iterator it) {
    if (&it->second == last_run_) last_run_ = nullptr;
    const auto next = std::next(it);
    if (spare_run_.empty()) {
        spare_run_ = runs_.extract(it);
    } else {
        runs_.erase(it);
    }
    return next;
}

void EngineCore::finish_task(TaskId task) { finish_task(task, graph_.state(task), records_.find(task)); }

void EngineCore::finish_task(TaskId task, TaskState s, Record* r) {
    const std::optional<uint64_t> run = r != nullptr ? std::optional(r->run) : std::nullopt;
    if (s == TaskState::FAILED || s == TaskState::POISONED) {
        // Kept in the tracker and the graph until its run's failure is reported,
        // so a task submitted later that needs these bytes is poisoned too
        // instead of running on bytes that were never produced.
        if (run) run_of(*run).failed_kept.push_back(task);
    } else {
        tracker_.complete(task);
        graph_.retire(task);
    }
    if (r != nullptr) {
        uncount_users(*r);
        records_.erase(task);
    }
    trim_live_order();
    if (run) {
        RunState& state = run_of(*run);
        if (--state.unfinished == 0) {
            run_progress_ = true;
            if (state.cancelled && state.ended) forget_run(*run);
        }
    }
    if (!releases_.empty()) run_due_releases();
}

void EngineCore::trim_live_order() {
    while (!live_order_.empty() && !records_.contains(live_order_.front())) live_order_.pop_front();
    if (live_order_.size() <= 2 * records_.size() + 64) return;
    live_order_.clear();
    records_.for_each([this](TaskId id, const Record&) { live_order_.push_back(id); });
    std::sort(live_order_.begin(), live_order_.end());
}

uint64_t EngineCore::end_run(bool collected) {
    RunState& state = run_of(run_);
    state.ended = true;
    state.collected = collected;
    run_progress_ = true;
    return run_++;
}

const RunState* EngineCore::run_state(uint64_t run) const {
    const auto it = runs_.find(run);
    return it == runs_.end() ? nullptr : &it->second;
}

bool EngineCore::run_finished(uint64_t run) const {
    const auto it = runs_.find(run);
    if (it == runs_.end()) return run < run_;
    if (!it->second.ended || it->second.unfinished > 0) return false;
    for (auto e = runs_.begin(); e != it; ++e)
        if (e->second.cancelled && e->second.unfinished > 0) return false;
    return true;
}

std::vector<uint64_t> EngineCore::finished_collected_runs() const {
    std::vector<uint64_t> out;
    for (const auto& [n, state] : runs_)
        if (state.collected && run_finished(n)) out.push_back(n);
    return out;
}

std::vector<uint64_t> EngineCore::collected_runs() const {
    std::vector<uint64_t> out;
    for (const auto& [n, state] : runs_)
        if (state.collected && state.ended && !state.cancelled) out.push_back(n);
    return out;
}

void EngineCore::retire_kept(RunState& state) {
    for (TaskId t : state.failed_kept) {
        if (tracker_.is_live(t)) tracker_.complete(t);
        graph_.retire(t);
        failed_roots_.erase(t);
    }
    state.failed_kept.clear();
}

void EngineCore::forget_run(uint64_t run) {
    const auto it = runs_.find(run);
    if (it == runs_.end()) return;
    retire_kept(it->second);
    if (first_failure_ && first_failure_->task.run == run) first_failure_.reset();
    (void)drop_run(it);
}

size_t EngineCore::cancel_run(uint64_t run, const std::string& why, const Withdraw& withdraw) {
    std::vector<TaskId> doomed;
    records_.for_each([&](TaskId id, const Record& r) {
        if (r.run != run) return;
        const TaskState s = graph_.state(id);
        if (s != TaskState::PENDING && s != TaskState::READY) return;
        // A chained task on its chip is cancelled only if its lane withdraws it.
        if (r.outstanding > 0 && !withdrawn(id, r, withdraw)) return;
        doomed.push_back(id);
    });
    const size_t before = run_of(run).poisoned;
    for (TaskId id : doomed) {
        if (!records_.contains(id)) continue;  // poisoned through an earlier one
        scratch_.clear();
        graph_.poison(id, TaskFailure{0, why}, scratch_);
        on_poisoned(scratch_);
    }
    if (run == run_) (void)end_run();
    RunState& state = run_of(run);
    const size_t cancelled = state.poisoned - before;
    state.cancelled = true;
    state.first_failure.reset();
    state.poisoned = 0;
    retire_kept(state);
    if (first_failure_ && first_failure_->task.run == run) first_failure_.reset();
    if (state.unfinished == 0) (void)drop_run(runs_.find(run));
    run_progress_ = true;
    return cancelled;
}

void EngineCore::count_users(const Record& r) {
    for (const CanonicalIdentity& id : r.names) ++users_[id].tasks;
}

void EngineCore::uncount_users(const Record& r) {
    for (const CanonicalIdentity& id : r.names) {
        const auto it = users_.find(id);
        if (it == users_.end()) continue;  // never: counted at its submit
        unheld_.insert(unheld_.end(), it->second.holds, id);
        if (--it->second.tasks == 0) users_.erase(it);
    }
}

size_t EngineCore::hold_users(const CanonicalIdentity& id) {
    const auto it = users_.find(id);
    if (it == users_.end()) return 0;
    ++it->second.holds;
    return it->second.tasks;
}

void EngineCore::take_unheld(std::vector<CanonicalIdentity>& out) {
    out.insert(out.end(), unheld_.begin(), unheld_.end());
    unheld_.clear();
}

void EngineCore::drop_all_holds(std::vector<CanonicalIdentity>& out) {
    take_unheld(out);
    for (auto& [id, users] : users_) {
        out.insert(out.end(), size_t{users.tasks} * users.holds, id);
        users.holds = 0;
    }
}

void EngineCore::release_after(std::function<void()> action) {
    releases_.push_back({next_task_, std::move(action)});
    run_due_releases();
}

void EngineCore::run_due_releases() {
    trim_live_order();
    while (!releases_.empty() && (live_order_.empty() || releases_.front().before <= live_order_.front())) {
        std::function<void()> action = std::move(releases_.front().action);
        releases_.pop_front();
        action();
    }
}

void EngineCore::child_lost(ChildRef child, const std::string& why) {
    const auto k = static_cast<size_t>(child.kind);
    queue_.retire(child);
    lost_[k].at(child.index) = last_lost_[k] = why.empty() ? "lost" : why;
    // Unstarted tasks that can never run now: any naming the lost child, or
    // needing more children of its kind at once than remain alive.
    const uint32_t alive = queue_.live_count(child.kind);
    std::vector<TaskId> doomed;
    records_.for_each([&](TaskId id, const Record& r) {
        const TaskState s = graph_.state(id);
        if ((s != TaskState::READY && s != TaskState::PENDING) || r.outstanding > 0) return;
        uint32_t any = 0;
        bool needs_lost = false;
        for (const MemberTarget& t : r.targets()) {
            any += !t.named() && t.kind == child.kind;
            needs_lost |= t == MemberTarget::child(child);
        }
        if (needs_lost || any > alive) doomed.push_back(id);
    });
    for (TaskId id : doomed) {
        const Record* r = records_.find(id);
        if (r == nullptr) continue;  // poisoned through an earlier one
        // a run that loses work must fail, even if no task failed
        note_failure(RunFailure{TaskHandle{id, r->run}, r->kind, r->callable, 0, MemberTarget::child(child),
                                "not run: " + why, nullptr});
        scratch_.clear();
        graph_.poison(id, TaskFailure{id, why}, scratch_);
        on_poisoned(scratch_);
    }
}

bool EngineCore::withdrawn(TaskId id, const Record& r, const Withdraw& withdraw) const {
    return r.chained && withdraw && withdraw(id, ChildRef{ChildKind::CHIP, r.target0.index()});
}

void EngineCore::abandon(const std::string& why, const Withdraw& withdraw) {
    scratch_.clear();
    std::function<bool(TaskId)> spare;
    if (withdraw) {
        spare = [&](TaskId id) {
            const Record* r = records_.find(id);
            return r != nullptr && r->outstanding > 0 && !withdrawn(id, *r, withdraw);
        };
    }
    graph_.poison_unstarted(TaskFailure{0, why}, scratch_, spare);
    if (!scratch_.empty() && !first_failure_) {
        const Record& r = record(scratch_.front());
        first_failure_ = RunFailure{TaskHandle{scratch_.front(), r.run},
                                    r.kind,
                                    r.callable,
                                    0,
                                    r.targets().front(),
                                    "not run: " + why,
                                    nullptr};
    }
    on_poisoned(scratch_);
}

void EngineCore::clear_failure() noexcept {
    first_failure_.reset();
    poisoned_count_ = 0;
    for (auto it = runs_.begin(); it != runs_.end();) {
        RunState& state = it->second;
        retire_kept(state);
        state.first_failure.reset();
        state.poisoned = 0;
        it = state.ended && state.unfinished == 0 ? drop_run(it) : std::next(it);
    }
}

}  // namespace simpler
