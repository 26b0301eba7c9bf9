#include "simpler/ipc/mailbox_ring.h"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace simpler::ipc {

MailboxRing::MailboxRing(MailboxRingConfig config, const Doorbell& doorbell)
    : board_(config.board), lane_(config.lane) {
    if (config.depth == 0 || config.depth > MAX_RING_DEPTH) {
        throw std::invalid_argument("MailboxRingConfig.depth: must be in [1, " + std::to_string(MAX_RING_DEPTH) +
                                    "] (got " + std::to_string(config.depth) + ")");
    }
    if (board_ != nullptr && lane_ >= board_->lanes()) {
        throw std::invalid_argument("MailboxRingConfig.lane: " + std::to_string(lane_) +
                                    " is not a lane of the board (it has " + std::to_string(board_->lanes()) + ")");
    }
    slots_.reserve(config.depth);
    for (uint32_t i = 0; i < config.depth; ++i)
        slots_.push_back(std::make_unique<Mailbox>(MailboxConfig{config.blob_capacity}, doorbell));
    seqs_.assign(config.depth, 0);
}

// ---- parent side ----------------------------------------------------------

bool MailboxRing::usable() const noexcept {
    return lost_reason_.empty() && std::all_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->usable(); });
}

std::string MailboxRing::poison_reason() const {
    if (!lost_reason_.empty()) return lost_reason_;
    for (const auto& s : slots_) {
        std::string why = s->poison_reason();
        if (!why.empty()) return why;
    }
    return {};
}

Deadline MailboxRing::deadline() const noexcept { return count_ == 0 ? NO_DEADLINE : slots_[head_]->deadline(); }

std::vector<uint64_t> MailboxRing::in_flight_seqs() const {
    std::vector<uint64_t> out;
    out.reserve(count_);
    for (uint32_t k = 0; k < count_; ++k) out.push_back(seqs_[(head_ + k) % depth()]);
    return out;
}

PublishStatus MailboxRing::publish(uint64_t callable_id, const CallConfig& config, std::span<const std::byte> blob,
                                   uint64_t& task_seq, Deadline deadline, uint32_t after_mask, bool withdrawn,
                                   std::span<const LaneCondition> conditions) noexcept {
    if (!usable()) return PublishStatus::LANE_DEAD;
    if (full()) return PublishStatus::BUSY;
    if (!conditions.empty() && board_ == nullptr) return PublishStatus::BAD_CONDITIONS;
    // Bit i-1 names the task i back: i must be below the depth (the child keeps
    // that many outcomes) and at most the number of tasks published so far.
    const uint64_t reach = std::min<uint64_t>(depth() - 1, next_seq_ - 1);
    if (reach < 32 && (after_mask >> reach) != 0) return PublishStatus::BAD_AFTER_MASK;
    const uint32_t k = (head_ + count_) % depth();
    uint64_t slot_seq = 0;
    const PublishStatus st =
        slots_[k]->publish(callable_id, config, blob, slot_seq, deadline, after_mask, withdrawn, conditions);
    if (st != PublishStatus::OK) return st;
    if (board_ != nullptr) board_->note_published(lane_, next_seq_);
    seqs_[k] = next_seq_++;
    ++count_;
    task_seq = seqs_[k];
    return PublishStatus::OK;
}

std::optional<TaskResult> MailboxRing::poll_result(Clock::time_point now) noexcept {
    if (count_ == 0) return std::nullopt;
    Mailbox& oldest = *slots_[head_];
    std::optional<TaskResult> r = oldest.poll_result(now);
    if (!r && !lost_reason_.empty()) {
        r = oldest.abandon(lost_error_, "the lane was lost before this task ran (" + lost_reason_ + ")");
    }
    if (!r) return std::nullopt;
    r->task_seq = seqs_[head_];
    const bool parent_side =
        r->error == TaskError::CHILD_DIED || r->error == TaskError::TIMED_OUT || r->error == TaskError::PROTOCOL;
    if (parent_side && lost_reason_.empty()) {
        lost_error_ = r->error;
        lost_reason_ = std::string(task_error_name(r->error)) + ": " + r->message;
        if (board_ != nullptr) board_->mark_lost(lane_);
    }
    head_ = (head_ + 1) % depth();
    --count_;
    return r;
}

bool MailboxRing::withdraw(uint64_t task_seq) noexcept {
    if (!lost_reason_.empty()) return false;
    for (uint32_t k = 0; k < count_; ++k) {
        const uint32_t slot = (head_ + k) % depth();
        if (seqs_[slot] == task_seq) return slots_[slot]->withdraw();
    }
    return false;
}

void MailboxRing::request_shutdown() noexcept {
    for (auto& s : slots_) s->request_shutdown();
}

void MailboxRing::mark_child_exited(int wait_status) noexcept {
    for (auto& s : slots_) s->mark_child_exited(wait_status);
    // What the lane had not completed never will be: its waiters on other lanes wake now.
    if (board_ != nullptr) board_->mark_lost(lane_);
}

// ---- child side -----------------------------------------------------------

namespace {

// Before `slot`'s task starts: checks its lane conditions and waits for each
// on the board. Returns the task's answer when it must not run (a refusal, a
// producer that did not succeed), nullopt when it may; `shutdown` is set when
// the parent asked the child to stop meanwhile. A withdrawal ends the wait too
// (begin_task() then answers it withdrawn).
std::optional<TaskOutcome> await_conditions(Mailbox& slot, const MailboxRing& ring, SpinWaiter& waiter,
                                            bool& shutdown) {
    std::array<LaneCondition, MAX_LANE_CONDITIONS> conditions{};
    const uint32_t count = slot.task_conditions(conditions);
    if (count == 0) return std::nullopt;
    LaneBoard* board = ring.board();
    if (board == nullptr) {
        return TaskOutcome{TaskError::BAD_ARGUMENTS, "the task names producers on other lanes: its lane has no board"};
    }
    if (auto refused = check_conditions(conditions, count, *board, ring.lane())) {
        return TaskOutcome{TaskError::BAD_ARGUMENTS, "lane conditions: " + *refused};
    }
    for (uint32_t i = 0; i < count; ++i) {
        ConditionState state = ConditionState::PENDING;
        while ((state = board->wait(conditions[i], waiter, Clock::now() + CONDITION_SLICE)) ==
               ConditionState::PENDING) {
            if (slot.shutdown_requested()) {
                shutdown = true;
                return std::nullopt;
            }
            if (slot.withdrawn_before_start()) return std::nullopt;
        }
        // RECYCLED: the producer's lane completed OUTCOME_WINDOW tasks past it, so
        // its parent collected its result long ago and, had it failed, withdrew
        // this task then (begin_task() answers it withdrawn).
        if (state != ConditionState::SUCCEEDED && state != ConditionState::RECYCLED) {
            return TaskOutcome{TaskError::SKIPPED, condition_failure(conditions[i], state, *board)};
        }
    }
    return std::nullopt;
}

}  // namespace

int serve_ring(MailboxRing& ring, const TaskHandler& handler, SpinPolicy policy, std::chrono::nanoseconds idle_limit,
               const std::function<bool()>& stop_after_task) {
    // The child is the side of the pair that steps off a shared CPU (spin_wait.h).
    SpinWaiter waiter(policy, SharedCore::STEP_ASIDE);
    SpinWaiter condition_waiter(policy);  // on other lanes' progress: its own budget
    BoardNote note{ring.board(), ring.lane(), 0};
    // Whether each of the last MAX_RING_DEPTH tasks failed or was skipped,
    // indexed by lane sequence modulo MAX_RING_DEPTH.
    std::array<bool, MAX_RING_DEPTH> bad{};
    uint64_t seq = 0;             // the lane sequence of the task served last
    bool parent_waking = false;  // the last finish woke the parent
    for (uint32_t k = 0;; k = (k + 1) % ring.depth()) {
        Mailbox& slot = ring.slot(k);
        switch (slot.wait_request(waiter, idle_deadline(idle_limit), parent_waking)) {
            case ChildWake::SHUTDOWN: return SERVE_SHUTDOWN;
            case ChildWake::TIMED_OUT: return SERVE_IDLE_LIMIT;
            case ChildWake::TASK: break;
        }
        ring.set_serving_slot(k);
        bool shutdown = false;
        const std::optional<TaskOutcome> held = await_conditions(slot, ring, condition_waiter, shutdown);
        if (shutdown) return SERVE_SHUTDOWN;
        const TaskView task = slot.begin_task();
        ++seq;
        note.seq = seq;
        const BoardNote* noted = note.board != nullptr ? &note : nullptr;
        uint64_t failed_producer = 0;
        for (uint32_t i = 1; i <= MAX_RING_DEPTH && i < seq; ++i) {
            if ((task.after_mask >> (i - 1) & 1u) != 0 && bad[(seq - i) % MAX_RING_DEPTH]) {
                failed_producer = seq - i;
                break;
            }
        }
        bool ok = false;
        if (failed_producer != 0) {
            ok = finish_task(slot,
                             {TaskError::SKIPPED, "not run: task " + std::to_string(failed_producer) +
                                                      " ahead of it on this lane, a producer of it, failed"},
                             noted);
        } else if (held && !task.withdrawn) {
            ok = finish_task(slot, *held, noted);
        } else {
            ok = serve_task(slot, task, handler, noted);
        }
        bad[seq % MAX_RING_DEPTH] = !ok;
        parent_waking = slot.finish_woke_parent();
        if (stop_after_task && stop_after_task()) return SERVE_STOPPED;
    }
}

}  // namespace simpler::ipc
