// Fuzzes the child's decoding of a task's lane conditions (lane_board.h):
// whatever the frame holds as the count and the entries, and whatever the
// board says each lane has published, check_conditions reads only the
// MAX_LANE_CONDITIONS entries it was given and accepts only conditions a
// waiter may wait on (a count within the maximum; each a lane of the board,
// not the task's own, a sequence from 1 to what the lane published), and
// looking them up on the board then reads inside it.
//
// Input: bytes 0..3 the count, 4..7 the task's own lane (mod the board's
// lanes), 8..15 what each of the 8 lanes has published (one byte each), the
// rest the MAX_LANE_CONDITIONS entries as the frame holds them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "simpler/ipc/lane_board.h"

using namespace simpler::ipc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static LaneBoard board(8);
    static uint64_t published[8] = {};
    std::array<uint8_t, 16 + sizeof(LaneCondition) * MAX_LANE_CONDITIONS> in{};
    std::memcpy(in.data(), data, size < in.size() ? size : in.size());
    uint32_t count = 0;
    uint32_t own = 0;
    std::memcpy(&count, in.data(), 4);
    std::memcpy(&own, in.data() + 4, 4);
    own %= board.lanes();
    for (uint32_t lane = 0; lane < board.lanes(); ++lane) {
        // Sequences only grow on a board: a lower byte leaves the lane where it was.
        board.note_published(lane, in[8 + lane]);
        if (in[8 + lane] > published[lane]) published[lane] = in[8 + lane];
    }
    std::array<LaneCondition, MAX_LANE_CONDITIONS> raw{};
    std::memcpy(raw.data(), in.data() + 16, sizeof(raw));
    const auto refused = check_conditions(raw, count, board, own);
    if (refused) {
        if (refused->empty()) std::abort();
        return 0;
    }
    if (count > MAX_LANE_CONDITIONS) std::abort();
    for (uint32_t i = 0; i < count; ++i) {
        const LaneCondition c = raw[i];
        if (c.lane >= board.lanes() || c.lane == own || c.seq == 0 || c.seq > published[c.lane]) std::abort();
        const ConditionState state = board.look(c);
        if (state != ConditionState::PENDING) std::abort();  // nothing completes on this board
        if (condition_failure(c, state, board).empty()) std::abort();
    }
    return 0;
}
