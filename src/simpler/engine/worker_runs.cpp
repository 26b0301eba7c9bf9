// Worker: runs — a waiting thread driving the lanes until what it waits for
// settles (a run, or room for a submit under max_unfinished), cancelling a
// run, describing a run's failure and what is in flight, and handing finished
// runs to whoever collects them.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/engine/internal/worker_impl.h"

namespace simpler {
namespace {

// How long a submit waits for room before it says why it may be waiting for ever.
constexpr std::chrono::seconds ROOM_WAIT_WARNING{10};

}  // namespace

template <class Settle>
bool Worker::Impl::drive_lanes_until(ipc::Deadline until, Settle&& settle) {
    // The waiting thread drives the lanes itself (collects results, dispatches
    // what they release) while the scheduler thread stands down (lane_drivers.h).
    LaneDrivers::Turn turn(drivers_);
    ipc::SpinWaiter& waiter = turn.waiter();
    for (;;) {
        const uint32_t seen = bell_.sequence();
        ipc::Deadline deadline = ipc::NO_DEADLINE;
        bool child_waking = false;
        {
            std::lock_guard lock(mu_);
            if (!stopping_) deadline = progress_locked();
            if (settle()) return true;
            child_waking = drivers_.take_woke_child();
        }
        if (until != ipc::NO_DEADLINE && ipc::Clock::now() >= until) return false;
        (void)bell_.wait_past(seen, waiter, std::min(deadline, until), child_waking);
    }
}

void Worker::Impl::await_released_name(const WindowMemory& windows, const std::string& name) {
    if (!windows.releasing_named(name)) return;
    const std::string& what = windows.operation();
    require_owner_process(what.c_str());
    (void)drive_lanes_until(ipc::NO_DEADLINE, [&] {
        if (stopping_) throw std::logic_error(what + ": the Worker is closed");
        return !windows.releasing_named(name);
    });
}

uint64_t Worker::Impl::room() const {
    if (config_.max_unfinished == 0) return UINT64_MAX;
    std::lock_guard lock(mu_);
    const uint64_t unfinished = core_.unfinished();
    return unfinished < config_.max_unfinished ? config_.max_unfinished - unfinished : 0;
}

void Worker::Impl::await_room() {
    if (room() > 0) return;
    // Once full, the submitter waits until a quarter of the window finished (at
    // least one task), not for each task: one wake-up lets a stretch of submits
    // in, instead of a wake-up per task. It drives the lanes while it waits, as
    // wait() does: a finished task is seen without a hand-off through the
    // scheduler thread.
    const uint64_t resume = config_.max_unfinished - std::max<uint64_t>(1, config_.max_unfinished / 4);
    const auto room = [this, resume] {
        if (stopping_) throw std::logic_error("Worker.submit: the Worker closed while the submit waited for room");
        return core_.unfinished() <= resume;
    };
    if (drive_lanes_until(ipc::Clock::now() + ROOM_WAIT_WARNING, room)) return;
    // Still full: tasks may just be long, or one may wait for something the
    // orchestration does only after this submit, which it never will. Say so
    // once for this wait instead of hanging without a word.
    std::fprintf(stderr,
                 "simpler: Worker.submit has waited %lld s for room: max_unfinished=%llu tasks of this Worker are "
                 "unfinished. If a task waits for something the orchestration does after this submit, it never "
                 "will: raise Worker(max_unfinished=...), or set it to 0 (no limit)\n",
                 static_cast<long long>(ROOM_WAIT_WARNING.count()),
                 static_cast<unsigned long long>(config_.max_unfinished));
    (void)drive_lanes_until(ipc::NO_DEADLINE, room);
}

void Worker::Impl::wait_for_room_locked(std::unique_lock<std::mutex>& lock) {
    while (config_.max_unfinished > 0 && core_.unfinished() >= config_.max_unfinished && !stopping_) {
        lock.unlock();
        await_room();
        lock.lock();
    }
}

bool Worker::Impl::wait_until(ipc::Deadline until) {
    if (!initialized_) throw std::logic_error("Worker.wait: the Worker was never initialized");
    require_owner_process("Worker.wait");
    return drive_lanes_until(until, [this] {
        if (stopping_ && core_.unfinished() > 0) {
            // close() ran (from another thread, or before this wait): the
            // children are going away, so what has not finished never will.
            FailureReport closed = closed_report_locked(std::nullopt);
            (void)core_.end_run();
            core_.clear_failure();
            throw RunError(std::move(closed));
        }
        if (core_.unfinished() > 0) return false;
        (void)core_.end_run();
        const std::optional<RunFailure>& f = core_.first_failure();
        std::optional<FailureReport> report;
        if (f) report = report_locked(*f, core_.poisoned_count());
        core_.clear_failure();  // also forgets the runs, every one finished
        if (report) throw RunError(std::move(*report));
        return true;
    });
}

std::string Worker::Impl::cancel_run(const std::string& why) {
    require_owner_process("Worker.cancel_run");
    std::lock_guard lock(mu_);
    if (!initialized_ || stopping_) return {};
    const size_t poisoned_before = core_.poisoned_count();
    core_.abandon(why, withdrawer());
    release_holds_locked();  // a cancelled task names nothing any more
    const size_t cancelled = core_.poisoned_count() - poisoned_before;
    core_.end_run();
    core_.clear_failure();
    return cancelled_text_locked(cancelled, std::nullopt);
}

std::string Worker::Impl::cancelled_text_locked(size_t cancelled, std::optional<uint64_t> run) const {
    std::string out = std::to_string(cancelled) + " task(s) not yet started were cancelled";
    const std::string running = describe_in_flight_locked(8, run);
    if (running.empty()) return out;
    return out + "; still running on their children, and waited for by the next run(): " + running;
}

std::string Worker::Impl::callable_label(TaskKind kind, uint64_t callable) const {
    const std::vector<std::string>& names = kind == TaskKind::SUB     ? config_.sub_callable_names
                                            : config_.num_workers > 0 ? config_.worker_callable_names
                                                                      : config_.chip_lane.chip.orchestrations;
    return callable < names.size() ? names[callable] : std::string();
}

std::string Worker::Impl::callable_name(TaskKind kind, uint64_t callable) const {
    const std::string label = callable_label(kind, callable);
    return label.empty() ? std::to_string(callable) : "'" + label + "'";
}

std::string Worker::Impl::describe_in_flight_locked(size_t limit, std::optional<uint64_t> run) const {
    std::string out;
    size_t listed = 0;
    size_t rest = 0;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        // A member held behind a control message is the lane's as much as one on the child.
        for (const std::deque<Dispatch>* members : {&lanes_[i].in_flight, &control_.held(i)}) {
            for (const Dispatch& d : *members) {
                if ((run && d.task.run != *run) || d.withdrawn) continue;  // a withdrawn task never runs
                if (listed == limit) {
                    ++rest;
                    continue;
                }
                out += std::string(listed++ > 0 ? ", " : "") + (d.kind == TaskKind::SUB ? "sub " : "") + d.task.name() +
                       " (callable " + callable_name(d.kind, d.callable) + ", member " + std::to_string(d.member) +
                       ") on " + d.child.name();
            }
        }
    }
    if (rest > 0) out += " and " + std::to_string(rest) + " more";
    return out;
}

FailureReport Worker::Impl::closed_report_locked(std::optional<uint64_t> run) const {
    FailedTask closed;
    closed.level = config_.level;
    closed.code = FailureCode::CLOSED;
    closed.text = "the Worker was closed while the run waited";
    const std::string running = describe_in_flight_locked(8, run);
    if (!running.empty()) closed.text += "; these had not finished and never will: " + running;
    if (!run) {
        if (const std::optional<RunFailure>& f = core_.first_failure())
            closed.text += "; " + report_locked(*f, core_.poisoned_count()).render();
    } else if (const RunState* state = core_.run_state(*run); state != nullptr && state->first_failure) {
        closed.text += "; " + report_locked(*state->first_failure, state->poisoned).render();
    }
    return FailureReport{{std::move(closed)}};
}

ipc::Deadline Worker::Impl::progress_locked() {
    collect_results_locked();
    read_below_locked();
    // Holds go back before the dispatch: a buffer they free is forgotten on each
    // lane before that lane's next task. A task whose publish failed finishes
    // in the dispatch; its holds go back after it.
    release_holds_locked();
    dispatch_locked();
    release_holds_locked();
    ipc::Deadline deadline = ipc::NO_DEADLINE;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        const Lane& l = lanes_[i];
        if (!l.in_flight.empty() || control_.on_child(i)) deadline = std::min(deadline, l.mailbox->deadline());
    }
    notify_runs_locked();
    return deadline;
}

FailedTask Worker::Impl::failed_task_locked(const RunFailure& f, size_t poisoned) const {
    FailedTask t;
    t.level = config_.level;
    t.has_task = true;
    t.task = f.task.id;
    t.run = f.task.run;
    t.sub = f.kind == TaskKind::SUB;
    t.callable_id = f.callable;
    t.callable = callable_label(f.kind, f.callable);
    t.member = f.member;
    t.child = ChildRef{f.where.kind, f.where.index()};
    t.any_child = !f.where.named();
    t.code = f.fault.code;
    t.text = f.fault.text;
    t.not_run = poisoned;
    if (f.cause) {
        FailedTask cause = failed_task_locked(*f.cause, 0);
        if (f.cause->fault.below) cause.text = f.cause->fault.words(cause.child);  // its report, in words
        t.cause = std::make_shared<const FailedTask>(std::move(cause));
    }
    return t;
}

FailureReport Worker::Impl::report_locked(const RunFailure& f, size_t poisoned) const {
    FailureReport r;
    r.levels.push_back(failed_task_locked(f, poisoned));
    if (f.fault.below && !f.cause) {
        const std::vector<FailedTask>& below = f.fault.below->levels;
        r.levels.insert(r.levels.end(), below.begin(), below.end());
    }
    return r;
}

std::optional<FailureReport> Worker::Impl::run_outcome_locked(uint64_t run) const {
    const RunState* state = core_.run_state(run);
    if (state == nullptr || !state->first_failure) return std::nullopt;
    return report_locked(*state->first_failure, state->poisoned);
}

void Worker::Impl::notify_runs_locked() {
    if (core_.take_run_progress()) runs_cv_.notify_all();
}

uint64_t Worker::Impl::end_run(bool collected) {
    require_owner_process("Worker.end_run");
    std::lock_guard lock(mu_);
    const uint64_t run = core_.end_run(collected);
    notify_runs_locked();
    return run;
}

bool Worker::Impl::wait_run(uint64_t run, ipc::Deadline until) {
    if (!initialized_) throw std::logic_error("Worker.wait_run: the Worker was never initialized");
    require_owner_process("Worker.wait_run");
    {
        std::lock_guard lock(mu_);
        const RunState* state = core_.run_state(run);
        if (state == nullptr || !state->ended)
            throw std::logic_error("Worker.wait_run: run " + std::to_string(run) +
                                   (state == nullptr ? " is not in flight (never ended, or already reported)"
                                                     : " has not ended (end_run)"));
    }
    return drive_lanes_until(until, [this, run] {
        if (stopping_ && !core_.run_finished(run)) {
            FailureReport closed = closed_report_locked(run);
            core_.forget_run(run);
            throw RunError(std::move(closed));
        }
        if (!core_.run_finished(run)) return false;
        std::optional<FailureReport> report = run_outcome_locked(run);
        core_.forget_run(run);
        if (report) throw RunError(std::move(*report));
        return true;
    });
}

std::string Worker::Impl::cancel_run(uint64_t run, const std::string& why) {
    require_owner_process("Worker.cancel_run");
    std::lock_guard lock(mu_);
    if (!initialized_ || stopping_) return {};
    const size_t cancelled = core_.cancel_run(run, why, withdrawer());
    release_holds_locked();  // a cancelled task names nothing any more
    notify_runs_locked();
    return cancelled_text_locked(cancelled, run);
}

Worker::FinishedRuns Worker::Impl::take_finished_runs(ipc::Deadline until) {
    require_owner_process("Worker.take_finished_runs");
    std::unique_lock lock(mu_);
    for (;;) {
        FinishedRuns out;
        out.closed = stopping_;
        for (uint64_t run : out.closed ? core_.collected_runs() : core_.finished_collected_runs()) {
            std::optional<FailureReport> failure =
                core_.run_finished(run) ? run_outcome_locked(run) : closed_report_locked(run);
            core_.forget_run(run);
            out.runs.push_back({run, std::move(failure)});
        }
        if (out.closed || !out.runs.empty() || ipc::Clock::now() >= until) return out;
        // Asleep until a run ends or finishes (notify_runs_locked), or close().
        if (until == ipc::NO_DEADLINE) {
            runs_cv_.wait(lock);
        } else {
            (void)runs_cv_.wait_until(lock, until);
        }
    }
}

}  // namespace simpler
