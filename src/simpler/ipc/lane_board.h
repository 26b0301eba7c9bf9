// LaneBoard: how far each child's lane has got, in memory every child of a
// Worker maps (created before fork), so a task on one lane can wait for a
// producer on another without the parent in between (a chip waiting on a chip).
//
// Each lane has a LaneProgress block: the sequence of the last task it
// completed, that task's and its predecessors' outcomes (the last
// OUTCOME_WINDOW, each one word: sequence and outcome together, so no reader
// sees one without the other), the last sequence the parent published on it,
// and a sticky `lost` word the parent sets when the lane's child is gone.
// The serving child records each task's outcome after the task's outputs are
// written (release), then bumps the block's `changes` word, which wakes a
// waiter only when one sleeps there (shared_word.h).
//
// A LaneCondition (mailbox_frame.h: "once task `seq` of lane `lane` has
// completed") travels in the consumer's mailbox frame (up to MAX_LANE_CONDITIONS a task; a producer
// on the task's own lane is named by the after mask instead, mailbox_ring.h).
// The consumer decodes it as any descriptor (check_conditions: a count beyond
// the maximum, a lane the board lacks, its own lane, sequence 0, a sequence
// the lane never published are refused by name), then waits: spins briefly,
// sleeps on the producer lane's `changes` word, and reads the outcome with
// acquire ordering: SUCCEEDED, FAILED (the producer failed or was skipped),
// LOST (the parent marked the lane lost: its child died), or RECYCLED (the
// lane completed OUTCOME_WINDOW tasks past it and no longer keeps its
// outcome: serve_ring counts it as met, since by then the parent has
// collected the producer's result and, had it failed, withdrawn the task).
//
// Every word may hold anything a peer wrote; a reader only compares. The
// producer writes its own block's outcomes and completion; the parent writes
// `published` and `lost`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "simpler/ipc/futex.h"
#include "simpler/ipc/mailbox_frame.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/shared_word.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler::ipc {

inline constexpr uint32_t OUTCOME_WINDOW = 64;
inline constexpr uint32_t MAX_BOARD_LANES = 4096;

struct alignas(64) LaneProgress {
    SharedWord changes;       // bumped after each completion and on loss; waiters sleep here
    uint32_t lost;            // 0 while the lane lives; then 1, for good (parent)
    uint32_t _pad0;
    uint64_t completed_seq;   // the last task the lane completed (producer; release, after its outcome)
    uint64_t published_seq;   // the last task the parent published on the lane (parent)
    uint8_t _pad1[32];
    uint64_t outcomes[OUTCOME_WINDOW];  // seq << 2 | LaneOutcome, at seq % OUTCOME_WINDOW (producer)
};
static_assert(std::is_trivially_copyable_v<LaneProgress>);
static_assert(std::is_standard_layout_v<LaneProgress>);
static_assert(sizeof(LaneProgress) == 576);
static_assert(offsetof(LaneProgress, completed_seq) == 16);
static_assert(offsetof(LaneProgress, published_seq) == 24);
static_assert(offsetof(LaneProgress, outcomes) == 64);

// A completed task's outcome as the board keeps it.
enum class LaneOutcome : uint32_t { SUCCEEDED = 1, FAILED = 2 };

// Where a condition stands.
enum class ConditionState : uint8_t {
    PENDING = 0,    // the producer has not completed yet
    SUCCEEDED = 1,  // the producer completed and succeeded: the task may run
    FAILED = 2,     // the producer failed or was skipped
    LOST = 3,       // the producer's lane was lost (its child died) before it completed
    RECYCLED = 4,   // the lane no longer keeps the producer's outcome
};

class LaneBoard {
public:
    // The shared region for `lanes` lanes, each at sequence 0 (std::invalid_argument
    // for 0 or over MAX_BOARD_LANES lanes; std::runtime_error when mmap fails).
    explicit LaneBoard(uint32_t lanes);

    [[nodiscard]] uint32_t lanes() const noexcept { return lanes_; }

    // ---- the parent -------------------------------------------------------
    // Task `seq` was published on `lane` (sequences only grow).
    void note_published(uint32_t lane, uint64_t seq) noexcept;
    // The lane's child is gone: every waiter on it wakes and sees LOST for
    // whatever the lane had not completed.
    void mark_lost(uint32_t lane) noexcept;

    // ---- the child serving `lane` -----------------------------------------
    // Task `seq` of `lane` completed (its outputs written); wakes the waiters.
    void complete(uint32_t lane, uint64_t seq, bool succeeded) noexcept;

    // ---- a waiting child --------------------------------------------------
    [[nodiscard]] uint64_t published(uint32_t lane) const noexcept;
    [[nodiscard]] uint64_t completed(uint32_t lane) const noexcept;
    [[nodiscard]] bool lost(uint32_t lane) const noexcept;
    // Where `c` stands now (c checked by check_conditions).
    [[nodiscard]] ConditionState look(const LaneCondition& c) const noexcept;
    // Waits until `c` is no longer PENDING or `deadline`; returns where it
    // stands then (PENDING: the deadline came first).
    ConditionState wait(const LaneCondition& c, SpinWaiter& waiter, Deadline deadline) noexcept;

    [[nodiscard]] LaneProgress& progress(uint32_t lane) const noexcept { return blocks_[lane]; }

private:
    SharedRegion region_;
    LaneProgress* blocks_ = nullptr;
    uint32_t lanes_ = 0;
};

// Checks the first `count` conditions of `raw` (as read from a shared frame:
// `count` is untrusted) for a task on `own_lane`. Returns the refusal, naming
// the condition and the rule ("condition 1: lane 7 is not a lane of this
// Worker (it has 2)"), or nullopt when each may be waited on.
[[nodiscard]] std::optional<std::string> check_conditions(std::span<const LaneCondition> raw, uint32_t count,
                                                          const LaneBoard& board, uint32_t own_lane);

// What a task's message says of a condition that ended other than SUCCEEDED
// ("its producer, task 4 of lane 1, failed").
[[nodiscard]] std::string condition_failure(const LaneCondition& c, ConditionState state, const LaneBoard& board);

}  // namespace simpler::ipc
