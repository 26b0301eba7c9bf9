// Worker: driving the lanes — the scheduler thread and the relay threads, a
// child's results collected, ready tasks dispatched and published, forget
// messages delivered, holds given back, and a lane lost.
#include <signal.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "simpler/backing/backing_retention.h"
#include "simpler/engine/internal/worker_impl.h"
#include "simpler/engine/seconds_text.h"

namespace simpler {

namespace {

const char* publish_status_text(ipc::PublishStatus s) noexcept {
    switch (s) {
        case ipc::PublishStatus::OK: return "published";
        case ipc::PublishStatus::BUSY: return "the lane already has a task in flight";
        case ipc::PublishStatus::LANE_DEAD: return "the child is gone";
        case ipc::PublishStatus::BLOB_TOO_LARGE: return "the argument blob exceeds the mailbox capacity";
        case ipc::PublishStatus::BAD_AFTER_MASK: return "the task names producers its lane cannot know";
        case ipc::PublishStatus::BAD_CONDITIONS:
            return "the task names more producers on other lanes than a frame holds";
    }
    return "unknown publish status";
}

// A result's failure as the engine keeps it, on a level-`level` Worker.
// FAILED_BELOW's text is the child Worker's encoded report; one that does not
// decode, or is not a level-(level - 1) Worker's, fails the task as PROTOCOL.
MemberFault fault_of(const ipc::TaskResult& r, uint32_t level) {
    if (r.ok()) return {};
    if (r.error == ipc::TaskError::FAILED_BELOW) {
        std::string why;
        std::optional<FailureReport> below = decode_failure(r.message, why);
        if (below && below->levels.front().level + 1 != level)
            why = "failure report.levels[0].level: a child of a level-" + std::to_string(level) + " Worker is level " +
                  std::to_string(level - 1) + " (got " + std::to_string(below->levels.front().level) + ")";
        if (why.empty())
            return {FailureCode::FAILED_BELOW, {}, std::make_shared<const FailureReport>(std::move(*below))};
        return {FailureCode::PROTOCOL, "the child's failure report does not decode: " + why, nullptr};
    }
    return {failure_code_of(r.error), r.message, nullptr};
}

}  // namespace

void Worker::Impl::scheduler_loop() noexcept {
    // The background path (progress while the orchestration thread neither
    // submits nor waits): it never spins, so it takes no core from the threads
    // on the latency path.
    ipc::SpinWaiter waiter(ipc::never_spin_policy());
    std::chrono::microseconds park = LaneDrivers::PARK_MIN;
    for (;;) {
        const uint32_t seen = bell_.sequence();
        const uint32_t park_seen = drivers_.park_word();
        const bool stand_down = drivers_.turn_held();
        ipc::Deadline deadline = ipc::NO_DEADLINE;
        {
            std::lock_guard lock(mu_);
            if (stopping_) return;
            if (!stand_down) deadline = progress_locked();
        }
        if (stand_down) {
            park = drivers_.park(park_seen, waiter, park);
            continue;
        }
        park = LaneDrivers::PARK_MIN;
        (void)bell_.wait_past(seen, waiter, deadline);
    }
}

void Worker::Impl::relay_loop(size_t lane, RelayLane relay) noexcept {
    ipc::MailboxRing& mailbox = *lanes_[lane].mailbox;
    std::string lost;
    {
        const ipc::TaskHandler handler = serve_with_control(std::move(relay.handlers));
        // Asked after every task, and after every idle spell of RELAY_IDLE_CHECK.
        const std::function<bool()> child_lost = [&] {
            try {
                lost = relay.lost();
            } catch (...) {
                lost = "its relay failed to say whether it is reachable";
            }
            return !lost.empty();
        };
        for (;;) {
            const int status = ipc::serve_ring(mailbox, handler, config_.spin, RELAY_IDLE_CHECK, child_lost);
            if (status == ipc::SERVE_SHUTDOWN || status == ipc::SERVE_STOPPED) break;
            if (child_lost()) break;
        }
    }
    const bool child_gone = !lost.empty();
    {
        // Under the engine mutex: whoever drives the lanes reads relay_lost_why under it.
        std::lock_guard lock(mu_);
        lanes_[lane].relay_lost = nullptr;
        if (child_gone) lanes_[lane].relay_lost_why = std::move(lost);
    }
    if (child_gone) {
        mailbox.mark_child_exited(0);
        bell_.ring();
    }
    // `relay` goes last, here: the relay says goodbye to its child on this thread.
}

bool Worker::Impl::withdraw_locked(TaskId task, ChildRef chip) {
    Lane& l = lanes_[lane_of(chip)];
    if (l.lost) return false;
    const std::vector<uint64_t> seqs = l.mailbox->in_flight_seqs();
    for (size_t k = 0; k < l.in_flight.size() && k < seqs.size(); ++k) {
        if (l.in_flight[k].task.id != task) continue;
        l.in_flight[k].withdrawn = l.mailbox->withdraw(seqs[k]);
        return l.in_flight[k].withdrawn;
    }
    // Held behind a control message: published withdrawn once the child answers
    // (skipped there, in its place, so the masks of the tasks after it still count right).
    for (Dispatch& d : control_.held(lane_of(chip))) {
        if (d.task.id != task) continue;
        d.withdrawn = true;
        return true;
    }
    return false;
}

std::string Worker::Impl::dead_lane_why_locked(const Lane& l) const {
    if (l.lost) return l.lost_why;
    return l.relay_lost_why.empty() ? l.mailbox->poison_reason() : l.relay_lost_why;
}

void Worker::Impl::collect_results_locked() {
    for (size_t i = 0; i < lanes_.size(); ++i) {
        Lane& l = lanes_[i];
        if (!l.in_flight.empty()) {
            // Results come in publish order; a lost lane reports every task on it at once.
            while (!l.in_flight.empty()) {
                const uint64_t seq = l.mailbox->in_flight_seq(0);
                std::optional<ipc::TaskResult> r = l.mailbox->poll_result();
                if (!r) break;
                // A chip that recorded the task SUCCEEDED on the board finished it
                // (its outputs written, and chips waiting for it may have run on
                // them) though its answer never came (it died just after): it succeeded.
                if (!r->ok() && board_ && l.ref.kind == ChildKind::CHIP &&
                    board_->look(ipc::LaneCondition{l.ref.index, 0, seq}) == ipc::ConditionState::SUCCEEDED)
                    r = ipc::TaskResult{ipc::TaskError::NONE, r->task_seq, {}};
                const Dispatch d = l.in_flight.front();
                l.in_flight.pop_front();
                // The next task's time starts now: it ran only after this one
                // (one waiting for producers on other chips: once they are collected).
                if (!l.in_flight.empty() && config_.task_timeout.count() > 0)
                    l.mailbox->restart_oldest_deadline(oldest_deadline_locked(l.in_flight.front()));
                MemberFault fault = fault_of(*r, config_.level);
                // A relay that lost its child with a task published but not yet taken never ran it.
                if (r->error == ipc::TaskError::CHILD_DIED && !l.relay_lost_why.empty())
                    fault = {FailureCode::NOT_DISPATCHED, "the child is gone (" + l.relay_lost_why + ")", nullptr};
                if (trace_) trace_->collected(i, r->ok() ? "" : fault.words(d.child));
                core_.member_finished(d, fault);
                ++l.done;
                if (board_ && config_.task_timeout.count() > 0 && l.ref.kind == ChildKind::CHIP)
                    start_waiting_deadlines_locked(d.task.id);
                if (!r->ok() && l.relay_lost && !l.lost) {
                    std::string why;
                    try {
                        why = l.relay_lost();
                    } catch (...) {
                        why.clear();  // asked again by the relay thread after the task
                    }
                    if (!why.empty()) lose_lane_locked(i, why);
                }
            }
        } else if (control_.on_child(i)) {
            if (std::optional<ipc::TaskResult> r = l.mailbox->poll_result()) {
                // A forget the child refused changes nothing it holds; an install's answer goes to
                // its ticket; a dead child is lost below.
                const bool install = control_.install_on_child(i);
                std::string why;
                if (install && !r->ok())
                    why = r->error == ipc::TaskError::TASK_FAILED
                              ? r->message
                              : std::string(ipc::task_error_name(r->error)) + ": " + r->message;
                control_.answered(i, l.ref, why);
                if (r->error == ipc::TaskError::TIMED_OUT && !install) {
                    // A child that does not answer a forget within task_timeout is lost as one
                    // that overruns a task: the tasks held behind the forget fail, not hang.
                    lose_lane_locked(i,
                                     "TIMED_OUT: it did not answer a forget message (buffers released) within "
                                     "task_timeout (" +
                                         seconds_text(config_.task_timeout) + " s); the child was killed");
                    continue;
                }
                if (r->ok() || l.mailbox->usable()) publish_next_control_locked(i);
            }
        }
        if (!l.lost && !l.mailbox->usable()) lose_lane_locked(i, dead_lane_why_locked(l));
    }
}

void Worker::Impl::dispatch_locked() {
    deliver_control_locked();
    batch_.clear();
    // A chip's lane takes a task behind the one it runs only while no control
    // message waits for it to empty: a steady stream would hold that back.
    core_.take(batch_, [this](ChildRef chip) { return control_.takes_tasks(lane_of(chip)); });
    for (const Dispatch& d : batch_) {
        const size_t i = lane_of(d.child);
        if (control_.must_hold(i)) {
            control_.hold(i, d);  // published once the child has answered the control message
            continue;
        }
        publish_locked(i, d);
    }
}

uint64_t Worker::Impl::lane_seq_locked(uint32_t chip, TaskId task) const {
    const Lane& l = lanes_[lane_of(ChildRef{ChildKind::CHIP, chip})];
    for (size_t k = 0; k < l.in_flight.size(); ++k)
        if (l.in_flight[k].task.id == task) return l.mailbox->in_flight_seq(static_cast<uint32_t>(k));
    return 0;
}

ipc::Deadline Worker::Impl::oldest_deadline_locked(const Dispatch& d) const {
    for (const Dispatch::LaneProducer& p : d.producers_elsewhere())
        if (lane_seq_locked(p.chip, p.task) != 0) return ipc::NO_DEADLINE;
    return task_deadline();
}

void Worker::Impl::start_waiting_deadlines_locked(TaskId producer) {
    for (uint32_t c = 0; c < config_.num_chips; ++c) {
        Lane& l = lanes_[lane_of(ChildRef{ChildKind::CHIP, c})];
        if (l.in_flight.empty()) continue;
        const std::span<const Dispatch::LaneProducer> waits = l.in_flight.front().producers_elsewhere();
        if (std::none_of(waits.begin(), waits.end(), [&](const auto& p) { return p.task == producer; })) continue;
        if (const ipc::Deadline at = oldest_deadline_locked(l.in_flight.front()); at != ipc::NO_DEADLINE)
            l.mailbox->restart_oldest_deadline(at);
    }
}

void Worker::Impl::publish_locked(size_t i, const Dispatch& d) {
    Lane& l = lanes_[i];
    ipc::CallConfig call{};
    std::memcpy(call.bytes, d.config, sizeof *d.config);
    // Each producer on another chip's lane still in flight there is a
    // condition on its lane sequence (the engine names only producers on
    // lanes that publish at once, so each was published before this task). One
    // no longer there was collected while this task was held behind a control
    // message of its own lane; one that was never there failed to publish.
    // Either way, had it failed, it poisoned this task, which then goes withdrawn.
    // The Dispatch kept in flight names only the producers it waits for.
    Dispatch sent = d;
    std::array<ipc::LaneCondition, ipc::MAX_LANE_CONDITIONS> conditions{};
    uint32_t count = 0;
    for (const Dispatch::LaneProducer& p : d.producers_elsewhere()) {
        if (const uint64_t at = lane_seq_locked(p.chip, p.task); at != 0) {
            sent.lane_producers[count] = p;
            conditions[count++] = ipc::LaneCondition{p.chip, 0, at};
        }
    }
    if (count < d.lane_producer_count && core_.poisoned(d.task.id)) sent.withdrawn = true;
    if (sent.withdrawn) count = 0;
    sent.lane_producer_count = count;
    // Waiting for producers on other chips' lanes, its time starts once they are collected.
    const ipc::Deadline deadline = count > 0 ? ipc::NO_DEADLINE : task_deadline();
    uint64_t seq = 0;
    // Stamped before the publish: the child may start at once, and the RUN
    // interval must contain its whole run.
    const int64_t published_ns = trace_ ? trace_now_ns() : 0;
    const ipc::PublishStatus st = l.mailbox->publish(d.callable, call, d.blob, seq, deadline, d.after_mask,
                                                     sent.withdrawn, std::span(conditions.data(), count));
    if (st == ipc::PublishStatus::OK) {
        drivers_.note_woke_child(l.mailbox->publish_woke_child());
        l.in_flight.push_back(sent);
        if (trace_) trace_->published(i, sent, published_ns);
        return;
    }
    if (trace_) trace_->not_published(d, publish_status_text(st));
    // A dead lane says how its child went ("CHILD_DIED: child killed by signal 9 ...").
    std::string why = publish_status_text(st);
    if (st == ipc::PublishStatus::LANE_DEAD) {
        const std::string how = dead_lane_why_locked(l);
        if (!how.empty()) why += " (" + how + ")";
    }
    core_.member_finished(d, MemberFault{FailureCode::NOT_DISPATCHED, why, nullptr});
    if (st == ipc::PublishStatus::LANE_DEAD && !l.lost) lose_lane_locked(i, dead_lane_why_locked(l));
}

void Worker::Impl::release_holds_locked(bool all) {
    if (!all && !core_.has_unheld()) return;
    unheld_.clear();
    if (all) {
        core_.drop_all_holds(unheld_);
    } else {
        core_.take_unheld(unheld_);
    }
    for (const CanonicalIdentity& id : unheld_) process_backing_retention().release(id);
}

void Worker::Impl::lose_lane_locked(size_t lane, const std::string& why) {
    Lane& l = lanes_[lane];
    if (!l.lost) lost_count_.fetch_add(1, std::memory_order_acq_rel);
    l.lost = true;
    l.lost_why = why.empty() ? "lost" : why;
    // A member held behind a control message was never published: it fails as
    // one whose publish the dead lane refused, in the trace too (a group's other
    // members may have run: the group failed, it did not go unrun).
    for (const Dispatch& d : control_.lose(lane, l.ref, l.lost_why)) {
        const MemberFault fault{FailureCode::NOT_DISPATCHED, "the child is gone (" + l.lost_why + ")", nullptr};
        if (trace_) trace_->not_published(d, fault.words(d.child));
        core_.member_finished(d, fault);
    }
    if (trace_) trace_->lane_lost(lane, l.lost_why);
    core_.child_lost(l.ref, l.ref.name() + " " + l.lost_why);
    status_changed_locked();
    if (l.child.pid() > 0 && !l.child.reaped()) l.child.signal(SIGKILL);  // a timed-out child may still run its task
}

}  // namespace simpler
