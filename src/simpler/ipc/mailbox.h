// Mailbox: one child's task lane, a MailboxFrame plus a blob area in a shared
// region created before fork. After fork the parent and the child each hold a
// copy of this handle; each side calls only its own half of the API (the
// parent's from one thread at a time — the Worker calls it under its engine
// mutex — and mark_child_exited from the reaper).
//
// Parent: publish() writes the task frame and the blob, release-stores
// TASK_READY, bumps the request word; poll_result() turns DONE/FAILED into a
// TaskResult and frees the lane, and turns a dead child, an overrun deadline or
// a corrupted frame into an error result that poisons the lane (usable() is
// then false for good). Child: wait_request() spins then sleeps until a task or
// shutdown arrives; begin_task() returns the task as a view; finish_*() stores
// the result and rings the parent's doorbell.
//
// Everything read from the shared frame is untrusted: the parent bounds lengths
// by its private capacity, checks the state value, the error code and the task
// sequence before believing them; the child bounds the blob length the same way
// (the blob's contents are validated by TaskArgsView, not here). The mailbox
// carries the blob as bytes and does not own the children or the doorbell.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/futex.h"
#include "simpler/ipc/mailbox_frame.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler::ipc {

// Why a task did not succeed. The child may report the first three; the rest
// are the parent's own findings.
enum class TaskError : int32_t {
    NONE = 0,
    TASK_FAILED = 1,       // the callable failed; the message says why
    BAD_ARGUMENTS = 2,     // the child refused the argument blob or the call config
    UNKNOWN_CALLABLE = 3,  // no callable with that id in the child
    CHILD_DIED = 4,        // the child exited with the task in flight
    TIMED_OUT = 5,         // the task overran its deadline; the child is still running it
    PROTOCOL = 6,          // the shared frame held an impossible value
    SKIPPED = 7,           // not run: a producer ahead of it on the same lane failed (MailboxRing), or withdrawn
    FAILED_BELOW = 8,      // a next-level Worker's run failed: the message is its encoded FailureReport
};
[[nodiscard]] const char* task_error_name(TaskError e) noexcept;

struct TaskResult {
    TaskError error = TaskError::NONE;
    uint64_t task_seq = 0;  // as returned by publish()
    std::string message;    // empty on success

    [[nodiscard]] bool ok() const noexcept { return error == TaskError::NONE; }
};

enum class PublishStatus : uint8_t {
    OK = 0,
    BUSY = 1,            // a task is already in flight on this lane
    LANE_DEAD = 2,       // the child exited or the lane is poisoned
    BLOB_TOO_LARGE = 3,  // the blob exceeds the lane's capacity
    BAD_AFTER_MASK = 4,  // MailboxRing: the after mask names no task the child can know
    BAD_CONDITIONS = 5,  // more than MAX_LANE_CONDITIONS lane conditions
};

struct MailboxConfig {
    size_t blob_capacity = DEFAULT_BLOB_CAPACITY;
};

// A published task as the child sees it; the views point into the shared
// region and stay valid until finish_*().
struct TaskView {
    uint64_t task_seq = 0;
    uint64_t callable_id = 0;
    CallConfig config{};
    std::span<const std::byte> blob;
    uint32_t after_mask = 0;  // MailboxRing: which of the tasks just before it are its producers
    bool withdrawn = false;   // the parent withdrew it before it started: answer SKIPPED, do not run it
};

enum class ChildWake : uint8_t {
    TASK = 0,      // begin_task() may be called
    SHUTDOWN = 1,  // the parent asked the child to exit; no new task starts
    TIMED_OUT = 2,
};

class Mailbox {
public:
    // Creates the shared region (std::invalid_argument for a capacity of 0 or
    // over MAX_BLOB_CAPACITY, std::runtime_error when mmap fails). `doorbell`
    // is rung by the child on every result and must outlive both sides' use.
    Mailbox(MailboxConfig config, const Doorbell& doorbell);

    // ---- parent side ------------------------------------------------------
    // Copies the task into the frame and wakes the child. `deadline` bounds
    // the task: poll_result() at or after it reports TIMED_OUT. `after_mask`
    // travels in the frame for a MailboxRing's child loop (mailbox_ring.h);
    // serve_tasks ignores it. `withdrawn`: the task is published already
    // withdrawn (WITHDRAWN, not TASK_READY): the child answers it SKIPPED
    // without running it, and the lane's order and sequence numbers are kept.
    // `conditions`: producers on other lanes the child waits for first
    // (lane_board.h; at most MAX_LANE_CONDITIONS, else BAD_CONDITIONS): a
    // MailboxRing's child loop honours them, serve_tasks ignores them as it
    // does the after mask.
    // Returns the lane's task sequence number through `task_seq`.
    PublishStatus publish(uint64_t callable_id, const CallConfig& config, std::span<const std::byte> blob,
                          uint64_t& task_seq, Deadline deadline = NO_DEADLINE, uint32_t after_mask = 0,
                          bool withdrawn = false, std::span<const LaneCondition> conditions = {}) noexcept;
    // The in-flight task's result when there is one to report, nullopt while it
    // runs (or when nothing is in flight). Frees the lane on DONE/FAILED.
    std::optional<TaskResult> poll_result(Clock::time_point now) noexcept;
    // Reads the clock only when the task has a deadline.
    std::optional<TaskResult> poll_result() noexcept {
        return poll_result(in_flight_ && deadline_ != NO_DEADLINE ? Clock::now() : Clock::time_point::min());
    }
    // Ends the in-flight task without a result from the child (its lane was
    // lost on another slot of a MailboxRing): poisons this mailbox with
    // `message` and returns the task's result; nullopt when nothing is in flight.
    std::optional<TaskResult> abandon(TaskError error, std::string message) noexcept;
    // Withdraws the in-flight task if the child has not started it: true when
    // it never will (the child answers it SKIPPED), false when it has started
    // (or already finished), when nothing is in flight, or when the lane is dead.
    bool withdraw() noexcept;
    // Sets the sticky shutdown word and wakes the child.
    void request_shutdown() noexcept;
    // Reaper thread: records that the child exited with `wait_status`. The
    // caller rings the doorbell afterwards so whoever drives the lanes looks.
    void mark_child_exited(int wait_status) noexcept;

    [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
    // Whether the last publish had to wake the child (it slept): its answer
    // comes only after a wake-up (spin_wait.h, "a peer being woken").
    [[nodiscard]] bool publish_woke_child() const noexcept { return publish_woke_; }
    [[nodiscard]] bool usable() const noexcept;
    [[nodiscard]] Deadline deadline() const noexcept { return in_flight_ ? deadline_ : NO_DEADLINE; }
    // Moves the in-flight task's deadline (a MailboxRing task's clock starts
    // when the ones ahead of it are done); nothing when none is in flight.
    void restart_deadline(Deadline deadline) noexcept {
        if (in_flight_) deadline_ = deadline;
    }
    // Why the lane is unusable; empty while it is usable. A child that exited
    // with nothing in flight reads "CHILD_DIED: child <how> while idle".
    [[nodiscard]] std::string poison_reason() const;

    // ---- child side -------------------------------------------------------
    // `parent_waking`: the child's last finish woke the parent, whose next
    // request comes only after its wake-up (SpinWaiter::wait_change's peer_waking).
    ChildWake wait_request(SpinWaiter& waiter, Deadline deadline = NO_DEADLINE, bool parent_waking = false) noexcept;
    // Marks the task RUNNING and returns it. A blob length beyond the capacity
    // yields an empty blob; the child should then finish_failed(BAD_ARGUMENTS).
    // A task the parent withdrew first comes back with `withdrawn` set: the
    // child answers it finish_failed(SKIPPED) without running it.
    [[nodiscard]] TaskView begin_task() noexcept;
    [[nodiscard]] bool blob_length_ok() const noexcept;
    void finish_ok() noexcept;
    // Stores the code and the message (truncated to ERROR_MESSAGE_BYTES - 1 at a
    // UTF-8 boundary, marked " [truncated]") and rings the doorbell. `error`
    // must be one a child may report; any other is sent as TASK_FAILED.
    void finish_failed(TaskError error, std::string_view message) noexcept;
    // Whether the last finish_*() had to wake the parent (it slept on the doorbell).
    [[nodiscard]] bool finish_woke_parent() const noexcept { return finish_woke_; }
    [[nodiscard]] bool shutdown_requested() const noexcept;
    // The published task's lane conditions as the frame holds them, before
    // begin_task(): returns the frame's count, untrusted (check_conditions
    // bounds it), and when it is not 0 copies all MAX_LANE_CONDITIONS entries into `out`.
    [[nodiscard]] uint32_t task_conditions(std::span<LaneCondition, MAX_LANE_CONDITIONS> out) const noexcept;
    // Whether the parent withdrew the published task (before begin_task(),
    // which would then answer it withdrawn).
    [[nodiscard]] bool withdrawn_before_start() const noexcept;

    [[nodiscard]] size_t blob_capacity() const noexcept { return capacity_; }
    [[nodiscard]] MailboxFrame& frame() const noexcept { return *frame_; }

private:
    void poison(TaskError error, std::string reason) noexcept;
    TaskResult fail_in_flight(TaskError error, std::string message) noexcept;

    SharedRegion region_;
    MailboxFrame* frame_ = nullptr;
    std::byte* blob_ = nullptr;
    size_t capacity_ = 0;
    SharedWord* doorbell_ = nullptr;
    // Parent-private state.
    bool in_flight_ = false;
    bool publish_woke_ = false;
    bool finish_woke_ = false;  // child side
    uint64_t next_seq_ = 1;
    uint64_t task_seq_ = 0;
    Deadline deadline_ = NO_DEADLINE;
    std::string poison_reason_;
};

// Parent helper for a caller with one lane (tests, benchmarks): waits on the
// doorbell until `mailbox` has a result or `deadline` passes (then the result
// is TIMED_OUT only if the task's own deadline passed; otherwise nullopt).
std::optional<TaskResult> wait_result(Mailbox& mailbox, const Doorbell& doorbell, SpinWaiter& waiter,
                                      Deadline deadline = NO_DEADLINE) noexcept;

}  // namespace simpler::ipc
