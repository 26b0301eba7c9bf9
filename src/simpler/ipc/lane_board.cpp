#include "simpler/ipc/lane_board.h"

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>

namespace simpler::ipc {

namespace {

template <typename T>
std::atomic_ref<T> ref(T& word) noexcept {
    return std::atomic_ref<T>(word);
}

}  // namespace

LaneBoard::LaneBoard(uint32_t lanes) : lanes_(lanes) {
    if (lanes == 0 || lanes > MAX_BOARD_LANES) {
        throw std::invalid_argument("LaneBoard: lanes must be in [1, " + std::to_string(MAX_BOARD_LANES) + "] (got " +
                                    std::to_string(lanes) + ")");
    }
    region_ = SharedRegion(sizeof(LaneProgress) * lanes);
    // A fresh anonymous mapping reads as zeros: every lane at sequence 0, alive.
    blocks_ = new (region_.data()) LaneProgress[lanes]();
}

void LaneBoard::note_published(uint32_t lane, uint64_t seq) noexcept {
    std::atomic_ref<uint64_t> published = ref(blocks_[lane].published_seq);
    if (seq > published.load(std::memory_order_relaxed)) published.store(seq, std::memory_order_release);
}

void LaneBoard::mark_lost(uint32_t lane) noexcept {
    LaneProgress& p = blocks_[lane];
    ref(p.lost).store(1, std::memory_order_seq_cst);
    (void)bump(p.changes);
}

void LaneBoard::complete(uint32_t lane, uint64_t seq, bool succeeded) noexcept {
    LaneProgress& p = blocks_[lane];
    const auto outcome = static_cast<uint64_t>(succeeded ? LaneOutcome::SUCCEEDED : LaneOutcome::FAILED);
    ref(p.outcomes[seq % OUTCOME_WINDOW]).store(seq << 2 | outcome, std::memory_order_relaxed);
    // Release: the task's outputs and its outcome are visible to whoever reads this sequence.
    ref(p.completed_seq).store(seq, std::memory_order_release);
    (void)bump(p.changes);
}

uint64_t LaneBoard::published(uint32_t lane) const noexcept {
    return ref(blocks_[lane].published_seq).load(std::memory_order_acquire);
}

uint64_t LaneBoard::completed(uint32_t lane) const noexcept {
    return ref(blocks_[lane].completed_seq).load(std::memory_order_acquire);
}

bool LaneBoard::lost(uint32_t lane) const noexcept {
    return ref(blocks_[lane].lost).load(std::memory_order_acquire) != 0;
}

ConditionState LaneBoard::look(const LaneCondition& c) const noexcept {
    LaneProgress& p = blocks_[c.lane];
    if (ref(p.completed_seq).load(std::memory_order_acquire) >= c.seq) {
        const uint64_t word = ref(p.outcomes[c.seq % OUTCOME_WINDOW]).load(std::memory_order_acquire);
        if (word >> 2 != c.seq) return ConditionState::RECYCLED;
        return (word & 3u) == static_cast<uint64_t>(LaneOutcome::SUCCEEDED) ? ConditionState::SUCCEEDED
                                                                            : ConditionState::FAILED;
    }
    return ref(p.lost).load(std::memory_order_acquire) != 0 ? ConditionState::LOST : ConditionState::PENDING;
}

ConditionState LaneBoard::wait(const LaneCondition& c, SpinWaiter& waiter, Deadline deadline) noexcept {
    SharedWord& changes = blocks_[c.lane].changes;
    for (;;) {
        // The word is read before the look: a completion after the look changes it, so the wait returns.
        const uint32_t seen = load_acquire(changes);
        const ConditionState now = look(c);
        if (now != ConditionState::PENDING) return now;
        if (!waiter.wait_change(changes, seen, deadline)) return look(c);
    }
}

std::optional<std::string> check_conditions(std::span<const LaneCondition> raw, uint32_t count, const LaneBoard& board,
                                            uint32_t own_lane) {
    if (count > MAX_LANE_CONDITIONS || count > raw.size()) {
        return "condition count " + std::to_string(count) + " is over the maximum of " +
               std::to_string(MAX_LANE_CONDITIONS);
    }
    for (uint32_t i = 0; i < count; ++i) {
        const LaneCondition c = raw[i];
        const std::string which = "condition " + std::to_string(i) + ": ";
        if (c.lane >= board.lanes()) {
            return which + "lane " + std::to_string(c.lane) + " is not a lane of this Worker (it has " +
                   std::to_string(board.lanes()) + ")";
        }
        if (c.lane == own_lane) {
            return which + "names the task's own lane " + std::to_string(c.lane) +
                   " (a producer on the same lane is named by the after mask)";
        }
        if (c.seq == 0) return which + "sequence 0 names no task (a lane's tasks count from 1)";
        const uint64_t published = board.published(c.lane);
        if (c.seq > published) {
            return which + "task " + std::to_string(c.seq) + " of lane " + std::to_string(c.lane) +
                   " was never published (the lane has published " + std::to_string(published) + ")";
        }
    }
    return std::nullopt;
}

std::string condition_failure(const LaneCondition& c, ConditionState state, const LaneBoard& board) {
    const std::string producer = "its producer, task " + std::to_string(c.seq) + " of lane " + std::to_string(c.lane);
    switch (state) {
        case ConditionState::FAILED: return "not run: " + producer + ", failed or was skipped";
        case ConditionState::LOST: return "not run: " + producer + ", was lost with its lane (the lane's child died)";
        case ConditionState::RECYCLED:
            return "not run: lane " + std::to_string(c.lane) + " no longer keeps the outcome of task " +
                   std::to_string(c.seq) + " (it has completed " + std::to_string(board.completed(c.lane)) +
                   " and keeps the last " + std::to_string(OUTCOME_WINDOW) + ")";
        case ConditionState::PENDING: return "not run: " + producer + ", has not completed";
        case ConditionState::SUCCEEDED: break;
    }
    return {};
}

}  // namespace simpler::ipc
