#include "simpler/ipc/mailbox.h"

#include "simpler/ipc/child_process.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

namespace simpler::ipc {
namespace {

constexpr std::string_view TRUNCATION_MARK = " [truncated]";

std::atomic_ref<uint32_t> state_ref(MailboxFrame& f) noexcept { return std::atomic_ref<uint32_t>(f.state); }

bool child_may_report(int32_t code) noexcept {
    return code == static_cast<int32_t>(TaskError::TASK_FAILED) ||
           code == static_cast<int32_t>(TaskError::BAD_ARGUMENTS) ||
           code == static_cast<int32_t>(TaskError::UNKNOWN_CALLABLE) ||
           code == static_cast<int32_t>(TaskError::SKIPPED) || code == static_cast<int32_t>(TaskError::FAILED_BELOW);
}

// Reads the child's message, bounded by the buffer whatever message_bytes says.
std::string read_message(const MailboxFrame& f) {
    const uint32_t claimed = std::atomic_ref<const uint32_t>(f.message_bytes).load(std::memory_order_relaxed);
    const size_t limit = std::min<size_t>(claimed, ERROR_MESSAGE_BYTES - 1);
    char local[ERROR_MESSAGE_BYTES];
    std::memcpy(local, f.error_message, limit);
    return std::string(local, strnlen(local, limit));
}

}  // namespace

const char* task_error_name(TaskError e) noexcept {
    switch (e) {
        case TaskError::NONE: return "NONE";
        case TaskError::TASK_FAILED: return "TASK_FAILED";
        case TaskError::BAD_ARGUMENTS: return "BAD_ARGUMENTS";
        case TaskError::UNKNOWN_CALLABLE: return "UNKNOWN_CALLABLE";
        case TaskError::CHILD_DIED: return "CHILD_DIED";
        case TaskError::TIMED_OUT: return "TIMED_OUT";
        case TaskError::PROTOCOL: return "PROTOCOL";
        case TaskError::SKIPPED: return "SKIPPED";
        case TaskError::FAILED_BELOW: return "FAILED_BELOW";
    }
    return "UNKNOWN";
}

Mailbox::Mailbox(MailboxConfig config, const Doorbell& doorbell) {
    if (config.blob_capacity == 0 || config.blob_capacity > MAX_BLOB_CAPACITY) {
        throw std::invalid_argument("MailboxConfig.blob_capacity: must be in [1, " + std::to_string(MAX_BLOB_CAPACITY) +
                                    "] (got " + std::to_string(config.blob_capacity) + ")");
    }
    region_ = SharedRegion(sizeof(MailboxFrame) + config.blob_capacity);
    frame_ = new (region_.data()) MailboxFrame{};
    frame_->magic = MAILBOX_MAGIC;
    frame_->layout_version = MAILBOX_LAYOUT_VERSION;
    frame_->blob_capacity = config.blob_capacity;
    blob_ = static_cast<std::byte*>(region_.data()) + sizeof(MailboxFrame);
    capacity_ = config.blob_capacity;
    doorbell_ = doorbell.word();
}

// ---- parent side ----------------------------------------------------------

bool Mailbox::usable() const noexcept {
    return poison_reason_.empty() &&
           std::atomic_ref<uint32_t>(frame_->child_exited).load(std::memory_order_acquire) == 0;
}

std::string Mailbox::poison_reason() const {
    if (!poison_reason_.empty()) return poison_reason_;
    if (std::atomic_ref<uint32_t>(frame_->child_exited).load(std::memory_order_acquire) == 0) return {};
    const int status = std::atomic_ref<int32_t>(frame_->exit_status).load(std::memory_order_relaxed);
    return std::string(task_error_name(TaskError::CHILD_DIED)) + ": child " + describe_wait_status(status) +
           " while idle";
}

PublishStatus Mailbox::publish(uint64_t callable_id, const CallConfig& config, std::span<const std::byte> blob,
                               uint64_t& task_seq, Deadline deadline, uint32_t after_mask, bool withdrawn,
                               std::span<const LaneCondition> conditions) noexcept {
    if (!usable()) return PublishStatus::LANE_DEAD;
    if (in_flight_) return PublishStatus::BUSY;
    if (blob.size() > capacity_) return PublishStatus::BLOB_TOO_LARGE;
    if (conditions.size() > MAX_LANE_CONDITIONS) return PublishStatus::BAD_CONDITIONS;
    task_seq_ = next_seq_++;
    frame_->task_seq = task_seq_;
    frame_->callable_id = callable_id;
    frame_->config = config;
    frame_->blob_bytes = blob.size();
    frame_->after_mask = after_mask;
    frame_->condition_count = static_cast<uint32_t>(conditions.size());
    if (!conditions.empty()) std::memcpy(frame_->conditions, conditions.data(), conditions.size_bytes());
    if (!blob.empty()) std::memcpy(blob_, blob.data(), blob.size());
    const MailboxState ready = withdrawn ? MailboxState::WITHDRAWN : MailboxState::TASK_READY;
    state_ref(*frame_).store(static_cast<uint32_t>(ready), std::memory_order_release);
    in_flight_ = true;
    deadline_ = deadline;
    task_seq = task_seq_;
    publish_woke_ = bump(frame_->request);
    return PublishStatus::OK;
}

void Mailbox::poison(TaskError error, std::string reason) noexcept {
    if (poison_reason_.empty()) poison_reason_ = std::string(task_error_name(error)) + ": " + std::move(reason);
}

TaskResult Mailbox::fail_in_flight(TaskError error, std::string message) noexcept {
    poison(error, message);
    in_flight_ = false;
    return TaskResult{error, task_seq_, std::move(message)};
}

std::optional<TaskResult> Mailbox::abandon(TaskError error, std::string message) noexcept {
    if (!in_flight_) return std::nullopt;
    return fail_in_flight(error, std::move(message));
}

std::optional<TaskResult> Mailbox::poll_result(Clock::time_point now) noexcept {
    if (!in_flight_) return std::nullopt;
    uint32_t raw = state_ref(*frame_).load(std::memory_order_acquire);
    const bool exited = std::atomic_ref<uint32_t>(frame_->child_exited).load(std::memory_order_acquire) != 0;
    // The exit happened after everything the child wrote: look at the state
    // once more so a result stored just before dying is not lost.
    if (exited) raw = state_ref(*frame_).load(std::memory_order_acquire);
    const auto state = static_cast<MailboxState>(raw);
    if (state == MailboxState::DONE || state == MailboxState::FAILED) {
        const uint64_t seq = std::atomic_ref<uint64_t>(frame_->completed_seq).load(std::memory_order_relaxed);
        if (seq != task_seq_) {
            return fail_in_flight(TaskError::PROTOCOL, "result names task " + std::to_string(seq) + " but task " +
                                                           std::to_string(task_seq_) + " is in flight");
        }
        TaskResult result{TaskError::NONE, task_seq_, {}};
        if (state == MailboxState::FAILED) {
            const int32_t code = std::atomic_ref<int32_t>(frame_->error_code).load(std::memory_order_relaxed);
            if (!child_may_report(code)) {
                return fail_in_flight(TaskError::PROTOCOL,
                                      "child reported error code " + std::to_string(code) + ", which it may not");
            }
            result.error = static_cast<TaskError>(code);
            result.message = read_message(*frame_);
        }
        // The state stays DONE / FAILED until the next publish: a store here
        // would pull the child's line over before the engine's work on the
        // result, and the next publish writes TASK_READY over it anyway.
        in_flight_ = false;
        return result;
    }
    if (exited) {
        const int status = std::atomic_ref<int32_t>(frame_->exit_status).load(std::memory_order_relaxed);
        // The engine names the task; the mailbox's own sequence number would only confuse.
        return fail_in_flight(TaskError::CHILD_DIED,
                              "child " + describe_wait_status(status) + " with its task in flight");
    }
    if (state != MailboxState::TASK_READY && state != MailboxState::RUNNING && state != MailboxState::WITHDRAWN) {
        return fail_in_flight(TaskError::PROTOCOL,
                              "mailbox state " + std::to_string(raw) + " while a task is in flight");
    }
    if (now >= deadline_) {
        return fail_in_flight(TaskError::TIMED_OUT, std::string("the task overran its deadline (") +
                                                        (state == MailboxState::RUNNING ? "running" : "never started") +
                                                        "); the child still holds it");
    }
    return std::nullopt;
}

bool Mailbox::withdraw() noexcept {
    if (!in_flight_ || !usable()) return false;
    auto expected = static_cast<uint32_t>(MailboxState::TASK_READY);
    return state_ref(*frame_).compare_exchange_strong(expected, static_cast<uint32_t>(MailboxState::WITHDRAWN),
                                                      std::memory_order_acq_rel, std::memory_order_acquire);
}

void Mailbox::request_shutdown() noexcept {
    std::atomic_ref<uint32_t>(frame_->shutdown).store(1, std::memory_order_seq_cst);
    bump(frame_->request);
}

void Mailbox::mark_child_exited(int wait_status) noexcept {
    std::atomic_ref<int32_t>(frame_->exit_status).store(wait_status, std::memory_order_relaxed);
    std::atomic_ref<uint32_t>(frame_->child_exited).store(1, std::memory_order_seq_cst);
    // Wakes a child-side waiter too (none exists once the child is gone, but
    // the word is the same for a test that marks a live child).
    bump(frame_->request);
}

// ---- child side -----------------------------------------------------------

bool Mailbox::shutdown_requested() const noexcept {
    return std::atomic_ref<uint32_t>(frame_->shutdown).load(std::memory_order_acquire) != 0;
}

ChildWake Mailbox::wait_request(SpinWaiter& waiter, Deadline deadline, bool parent_waking) noexcept {
    for (;;) {
        const uint32_t seen = load_acquire(frame_->request);
        if (shutdown_requested()) return ChildWake::SHUTDOWN;
        const uint32_t state = state_ref(*frame_).load(std::memory_order_acquire);
        if (state == static_cast<uint32_t>(MailboxState::TASK_READY) ||
            state == static_cast<uint32_t>(MailboxState::WITHDRAWN)) {
            return ChildWake::TASK;
        }
        if (!waiter.wait_change(frame_->request, seen, deadline, std::exchange(parent_waking, false)))
            return ChildWake::TIMED_OUT;
    }
}

bool Mailbox::blob_length_ok() const noexcept {
    return std::atomic_ref<uint64_t>(frame_->blob_bytes).load(std::memory_order_relaxed) <= capacity_;
}

uint32_t Mailbox::task_conditions(std::span<LaneCondition, MAX_LANE_CONDITIONS> out) const noexcept {
    const uint32_t count = std::atomic_ref<uint32_t>(frame_->condition_count).load(std::memory_order_relaxed);
    // The common task names none: its conditions' line is left alone.
    if (count != 0) std::memcpy(out.data(), frame_->conditions, sizeof(frame_->conditions));
    return count;
}

bool Mailbox::withdrawn_before_start() const noexcept {
    return state_ref(*frame_).load(std::memory_order_acquire) == static_cast<uint32_t>(MailboxState::WITHDRAWN);
}

TaskView Mailbox::begin_task() noexcept {
    TaskView view;
    view.task_seq = frame_->task_seq;
    view.callable_id = frame_->callable_id;
    view.config = frame_->config;
    view.after_mask = frame_->after_mask;
    const uint64_t bytes = std::atomic_ref<uint64_t>(frame_->blob_bytes).load(std::memory_order_relaxed);
    if (bytes <= capacity_) view.blob = std::span<const std::byte>(blob_, static_cast<size_t>(bytes));
    task_seq_ = view.task_seq;
    // Against the parent's withdraw(): the first swap away from TASK_READY wins.
    auto expected = static_cast<uint32_t>(MailboxState::TASK_READY);
    view.withdrawn = !state_ref(*frame_).compare_exchange_strong(expected, static_cast<uint32_t>(MailboxState::RUNNING),
                                                                 std::memory_order_acq_rel, std::memory_order_acquire);
    return view;
}

void Mailbox::finish_ok() noexcept {
    // The message buffer is left alone: the parent reads it only on FAILED,
    // and touching it would cost one more cache line per hand-off.
    frame_->error_code = 0;
    frame_->message_bytes = 0;
    frame_->completed_seq = task_seq_;
    state_ref(*frame_).store(static_cast<uint32_t>(MailboxState::DONE), std::memory_order_release);
    finish_woke_ = bump(*doorbell_);
}

void Mailbox::finish_failed(TaskError error, std::string_view message) noexcept {
    const int32_t code = static_cast<int32_t>(error);
    frame_->error_code = child_may_report(code) ? code : static_cast<int32_t>(TaskError::TASK_FAILED);
    size_t n = message.size();
    const bool truncated = n > ERROR_MESSAGE_BYTES - 1;
    if (truncated) {
        n = ERROR_MESSAGE_BYTES - 1 - TRUNCATION_MARK.size();
        // Never split a UTF-8 sequence: step back to the start of the cut one.
        while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0u) == 0x80u) --n;
    }
    std::memcpy(frame_->error_message, message.data(), n);
    if (truncated) {
        std::memcpy(frame_->error_message + n, TRUNCATION_MARK.data(), TRUNCATION_MARK.size());
        n += TRUNCATION_MARK.size();
    }
    frame_->error_message[n] = '\0';
    frame_->message_bytes = static_cast<uint32_t>(n);
    frame_->completed_seq = task_seq_;
    state_ref(*frame_).store(static_cast<uint32_t>(MailboxState::FAILED), std::memory_order_release);
    finish_woke_ = bump(*doorbell_);
}

// ---- helpers --------------------------------------------------------------

std::optional<TaskResult> wait_result(Mailbox& mailbox, const Doorbell& doorbell, SpinWaiter& waiter,
                                      Deadline deadline) noexcept {
    for (;;) {
        const uint32_t seen = doorbell.sequence();
        if (std::optional<TaskResult> r = mailbox.poll_result()) return r;
        if (!mailbox.in_flight()) return std::nullopt;
        const Deadline until = std::min(deadline, mailbox.deadline());
        if (!doorbell.wait_past(seen, waiter, until)) {
            if (std::optional<TaskResult> r = mailbox.poll_result()) return r;
            if (Clock::now() >= deadline) return std::nullopt;
        }
    }
}

}  // namespace simpler::ipc
