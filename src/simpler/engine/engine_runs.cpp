// EngineCore's runs: the first failure of each run, a finished task counted
// against its run, a run ended, collected or forgotten, and a run cancelled
// (its tasks not yet dispatched never run).
#include <algorithm>
#include <string>
#include <utility>

#include "simpler/engine/engine_core.h"

namespace simpler {

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
    records_.for_each([&](TaskId id, Record& r) {
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
    finish_early();
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

}  // namespace simpler
