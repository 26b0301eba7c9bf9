// MailboxRing: one child's lane holding up to `depth` tasks at once — a ring
// of Mailbox slots (each its own frame and blob area, all created before fork,
// all ringing the same doorbell), served by the child strictly in the order
// the parent published them and reported back in that same order.
//
// Pipelining: the parent may publish a task whose producers are still in
// flight on this lane, naming them with an after mask (bit i-1: the task
// published i before this one). The child, which serves in order, has every
// such producer's outcome by the time it reaches the task; when one of them
// failed or was itself skipped, it does not run the task and answers SKIPPED
// ("a producer ahead of it on this lane failed", naming the producer's lane
// sequence). Tasks with an empty mask run whatever came before them, so
// control messages (forgets, installs) queued behind a task never overtake it.
//
// Withdrawal: the parent may withdraw a task in flight that the child has not
// started (withdraw(task_seq), Mailbox::withdraw); the child answers it SKIPPED
// in its turn, and a task whose after mask names it is skipped as well.
//
// Loss: when one slot reports a parent-side failure (the child died, a task
// overran its deadline, a corrupted frame), the ring is poisoned for good and
// every other task in flight on it is reported in order with the same error
// code — CHILD_DIED from each slot's own frame, otherwise "lost before it
// ran" with the first failure's reason — so no task on a lost lane hangs.
//
// Other lanes: a ring made with a LaneBoard (lane_board.h) and its index on
// it takes tasks that wait for producers on other lanes (publish's
// `conditions`). The parent's publish notes each sequence on the board and a
// lost ring marks its lane lost there (so does the reaper's
// mark_child_exited); the child, before it starts such a task, checks its
// conditions (a refusal answers BAD_ARGUMENTS) and waits for each on the
// board, looking every CONDITION_SLICE for a withdrawal or a shutdown; a
// producer that failed, was skipped or was lost with its lane makes the task
// SKIPPED, naming the producer. After each task it serves, the child records
// the outcome on the board, before it answers the parent.
//
// Threading as Mailbox: the parent's half from one thread at a time,
// mark_child_exited from the reaper; the child's half (serve_ring) from the
// child's serving thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simpler/ipc/lane_board.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/serve_tasks.h"

namespace simpler::ipc {

inline constexpr uint32_t MAX_RING_DEPTH = 8;
// How often a child waiting for another lane looks at its own slot for a
// withdrawal or a shutdown (neither wakes it there).
inline constexpr std::chrono::milliseconds CONDITION_SLICE{50};

struct MailboxRingConfig {
    size_t blob_capacity = DEFAULT_BLOB_CAPACITY;  // per slot
    uint32_t depth = 2;                            // tasks in flight at most, [1, MAX_RING_DEPTH]
    LaneBoard* board = nullptr;                    // the lanes' progress; null: no conditions, nothing recorded
    uint32_t lane = 0;                             // this ring's lane on `board`
};

class MailboxRing {
public:
    // std::invalid_argument for a depth outside [1, MAX_RING_DEPTH] or a
    // capacity Mailbox refuses; std::runtime_error when mmap fails.
    MailboxRing(MailboxRingConfig config, const Doorbell& doorbell);

    // ---- parent side ------------------------------------------------------
    // Publishes into the next free slot and returns the lane's sequence
    // number (1, 2, ... in publish order) through `task_seq`. `after_mask`
    // bit i-1 names the task published i before this one as a producer
    // (i < depth; that task may be in flight or already reported). BUSY when
    // `depth` tasks are in flight; BAD_AFTER_MASK when the mask names a task
    // at or beyond `depth` back or before the lane's first; LANE_DEAD and
    // BLOB_TOO_LARGE as Mailbox. Publishes nothing unless OK. `withdrawn`: as
    // Mailbox::publish (a task withdrawn before it reached the ring).
    // `conditions`: producers on other lanes of the board (see above;
    // BAD_CONDITIONS on a ring without a board or over MAX_LANE_CONDITIONS).
    PublishStatus publish(uint64_t callable_id, const CallConfig& config, std::span<const std::byte> blob,
                          uint64_t& task_seq, Deadline deadline = NO_DEADLINE, uint32_t after_mask = 0,
                          bool withdrawn = false, std::span<const LaneCondition> conditions = {}) noexcept;
    // The oldest in-flight task's result when it has one; nullopt while it
    // runs or when nothing is in flight. Results come strictly in publish order.
    std::optional<TaskResult> poll_result(Clock::time_point now) noexcept;
    std::optional<TaskResult> poll_result() noexcept {
        return poll_result(in_flight() != 0 && deadline() != NO_DEADLINE ? Clock::now() : Clock::time_point::min());
    }
    // Withdraws in-flight task `task_seq` if the child has not started it (the
    // result is then SKIPPED); false when it has, or when no such task is in flight.
    bool withdraw(uint64_t task_seq) noexcept;
    void request_shutdown() noexcept;
    void mark_child_exited(int wait_status) noexcept;

    // Whether the last publish had to wake the child (the newest in-flight
    // slot's Mailbox::publish_woke_child); false with nothing in flight.
    [[nodiscard]] bool publish_woke_child() const noexcept {
        return count_ > 0 && slots_[(head_ + count_ - 1) % slots_.size()]->publish_woke_child();
    }
    [[nodiscard]] uint32_t depth() const noexcept { return static_cast<uint32_t>(slots_.size()); }
    [[nodiscard]] uint32_t in_flight() const noexcept { return count_; }
    [[nodiscard]] bool full() const noexcept { return count_ == slots_.size(); }
    [[nodiscard]] bool usable() const noexcept;
    // The oldest in-flight task's deadline (NO_DEADLINE: none in flight, or
    // it has none). A task's deadline is enforced once it is the oldest: the
    // child serves in order, so a later one cannot finish first, and one whose
    // deadline passed while it waited is TIMED_OUT unless it finished by then.
    [[nodiscard]] Deadline deadline() const noexcept;
    [[nodiscard]] std::string poison_reason() const;
    // Restarts the oldest in-flight task's deadline (the tasks ahead of it are
    // reported: its own time starts now); nothing when none is in flight.
    void restart_oldest_deadline(Deadline deadline) noexcept {
        if (count_ != 0) slots_[head_]->restart_deadline(deadline);
    }
    // Task sequence numbers of the tasks in flight, oldest first.
    [[nodiscard]] std::vector<uint64_t> in_flight_seqs() const;
    // The k-th oldest in-flight task's sequence number (0: fewer are in flight).
    [[nodiscard]] uint64_t in_flight_seq(uint32_t k) const noexcept {
        return k < count_ ? seqs_[(head_ + k) % slots_.size()] : 0;
    }

    [[nodiscard]] Mailbox& slot(uint32_t i) noexcept { return *slots_[i]; }
    [[nodiscard]] LaneBoard* board() const noexcept { return board_; }
    [[nodiscard]] uint32_t lane() const noexcept { return lane_; }
    // Child side: the slot serve_ring serves now (or served last), for a
    // fault handler that must answer the task in progress from any thread.
    [[nodiscard]] Mailbox& serving_slot() noexcept { return *slots_[serving_.load(std::memory_order_relaxed)]; }
    void set_serving_slot(uint32_t i) noexcept { serving_.store(i, std::memory_order_relaxed); }

private:
    std::vector<std::unique_ptr<Mailbox>> slots_;
    std::vector<uint64_t> seqs_;  // lane sequence per slot while in flight
    uint32_t head_ = 0;           // the oldest in-flight slot
    uint32_t count_ = 0;
    uint64_t next_seq_ = 1;
    TaskError lost_error_ = TaskError::NONE;
    std::string lost_reason_;
    std::atomic<uint32_t> serving_{0};  // child side: serve_ring's current slot
    LaneBoard* board_ = nullptr;
    uint32_t lane_ = 0;
};

// The child's loop over a ring: serves its slots in order, skipping a task
// whose after mask names a producer that failed or was skipped; ends as
// serve_tasks does (shutdown, idle limit, stop_after_task). Its waiter steps
// off a CPU it finds itself sharing with the parent (spin_wait.h).
int serve_ring(MailboxRing& ring, const TaskHandler& handler, SpinPolicy policy = {},
               std::chrono::nanoseconds idle_limit = std::chrono::nanoseconds::max(),
               const std::function<bool()>& stop_after_task = {});

}  // namespace simpler::ipc
