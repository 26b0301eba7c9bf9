#include "simpler/engine/engine_core.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace simpler {

namespace {

EngineConfig with_tracker_settings(EngineConfig c) {
    c.tracker.record_explanations = c.record_edges;
    c.tracker.validate_tensors = false;  // TaskArgs::add_tensor validated every tensor
    return c;
}

}  // namespace

EngineCore::EngineCore(EngineConfig config)
    : config_(with_tracker_settings(std::move(config))),
      tracker_(config_.tracker),
      queue_(config_.children),
      edge_log_(config_.edge_log_capacity) {
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
    behind = false;
    withdrawn = false;
    across = false;
    preds.clear();
    names.clear();
}

EngineCore::Record& EngineCore::record(TaskId task) {
    Record* r = records_.find(task);
    if (r == nullptr) throw std::logic_error("EngineCore: no record of task " + std::to_string(task));
    return *r;
}

void EngineCore::take(std::vector<Dispatch>& out, const LaneOpen& lane_open) {
    finish_early();  // one a cancel or a loss poisoned since
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
    if (chains() && queue_.queued() > 0) take_behind(out, lane_open);
    if (!chain_candidates_.empty()) take_chained(out, lane_open);
}

void EngineCore::member_finished(const Dispatch& d, const MemberFault& fault) {
    const TaskId task = d.task.id;
    if (chains() && d.child.kind == ChildKind::CHIP) {
        chip_member_done(task, d.child);
    } else {
        queue_.release(d.child);
    }
    if (graph_.state(task) == TaskState::PENDING) {
        // A chained task whose producers' results are not in yet: one waited
        // on another chip's lane, or is behind one that did (engine_chain.cpp).
        // It finishes after them; off its lane now, nothing may wait for it there.
        early_.insert_or_assign(task, EarlyResult{d, fault});
    } else {
        finish_member(d, fault);
    }
    finish_early();
}

void EngineCore::finish_member(const Dispatch& d, const MemberFault& fault) {
    const TaskId task = d.task.id;
    Record& r = record(task);
    --r.outstanding;
    if (graph_.state(task) == TaskState::POISONED) {
        // A chained task whose producer failed: poisoned (and counted) then;
        // its lane skipped it, or lost it with the producer.
        if (r.outstanding == 0 && r.undispatched == 0) finish_task(task);
        return;
    }
    if (fault.failed() && !r.failed) {
        r.failed = true;
        auto root = std::make_shared<const RunFailure>(
            RunFailure{d.task, r.kind, r.callable, d.member, MemberTarget::child(d.child), fault, nullptr});
        note_failure(*root);
        failed_roots_[task] = std::move(root);
        scratch_.clear();
        graph_.fail(task, fault.words(d.child), scratch_);
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

void EngineCore::finish_early() {
    while (!early_due_.empty()) {
        const TaskId t = early_due_.back();
        early_due_.pop_back();
        auto it = early_.find(t);
        if (it == early_.end()) continue;
        const EarlyResult e = std::move(it->second);
        early_.erase(it);
        finish_member(e.dispatch, e.fault);
    }
}

void EngineCore::on_ready(std::span<const TaskId> ready) {
    for (TaskId t : ready) {
        Record& r = record(t);
        if (r.chained) {
            r.chained = false;  // already on its chip, behind the producers that just completed
            graph_.start(t);
            if (early_.contains(t)) early_due_.push_back(t);  // and back from it already
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
        if (Record* r = records_.find(t); r != nullptr && r->outstanding > 0) {
            if (early_.contains(t)) {  // its lane answered already: it finishes now
                early_due_.push_back(t);
                continue;
            }
            // One waiting on its lane for producers on other lanes is taken off
            // it now: its chip may find a failed producer's outcome gone from
            // the board once that producer's lane runs on (lane_board.h).
            if (r->across && r->chained && config_.withdraw) (void)withdrawn(t, *r, config_.withdraw);
            // One its lane withdrew is never begun by its chip: its names are
            // free now, not when the lane's answer comes back.
            if (r->withdrawn) {
                uncount_users(*r);
                r->names.clear();
            }
            continue;
        }
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
    f.fault.code = FailureCode::NOT_RUN;
    const TaskFailure* cause = graph_.failure(task);
    const auto root = cause != nullptr ? failed_roots_.find(cause->task) : failed_roots_.end();
    if (root != failed_roots_.end() && root->second->task.run != r.run) {
        f.fault.text = "it needs what " + root->second->task.name() + " failed to produce";
        f.cause = root->second;
    } else {
        f.fault.text = cause != nullptr ? cause->message : std::string("a task it needs failed");
    }
    run.first_failure = std::move(f);
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
                                MemberFault{FailureCode::NOT_RUN, why, nullptr}, nullptr});
        scratch_.clear();
        graph_.poison(id, TaskFailure{id, why}, scratch_);
        on_poisoned(scratch_);
    }
    finish_early();
}

bool EngineCore::withdrawn(TaskId id, Record& r, const Withdraw& withdraw) {
    if (!(r.chained || r.behind) || !withdraw || !withdraw(id, ChildRef{ChildKind::CHIP, r.target0.index()}))
        return false;
    r.withdrawn = true;
    return true;
}

void EngineCore::abandon(const std::string& why, const Withdraw& withdraw) {
    scratch_.clear();
    std::function<bool(TaskId)> spare;
    if (withdraw) {
        spare = [&](TaskId id) {
            Record* r = records_.find(id);
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
                                    MemberFault{FailureCode::NOT_RUN, why, nullptr},
                                    nullptr};
    }
    on_poisoned(scratch_);
    finish_early();
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
