// EngineCore's chained dispatch (EngineConfig::chip_lane_depth above 1): a
// chip task whose only unfinished producers are one-member tasks in flight on
// its own chip goes to that chip at once, behind them, with their positions
// as its after mask. The chip serves its lane in order, so the task reads
// what they wrote; when one of them fails the lane skips it, and the engine
// has already poisoned it through the graph exactly as if it had waited here.
// The graph keeps the edge: the task stays PENDING until its producers
// complete, then starts (on_ready) without being queued.
//
// Across chips (EngineConfig::cross_chip): producers in flight on other
// chips' lanes may be among them too (at most Dispatch::MAX_LANE_PRODUCERS,
// each on a lane the Worker's LaneOpen allows, so it is published before this
// task); the task names them in Dispatch::lane_producers and its chip waits
// for each on the Worker's LaneBoard, skipping the task when one failed or its
// lane was lost. Such a task may go to an empty lane (DispatchQueue::claim).
// A failure that poisons it withdraws it from its lane at once
// (EngineConfig::withdraw): the chip never begins a task whose producer
// failed, even after the producer's lane has completed so many more tasks
// that the board no longer keeps that producer's outcome.
//
// A ready task queued for a busy chip by name goes to the chip's lane behind
// what it runs (take_behind): the chip begins it as soon as it finishes the
// one ahead, with no hand-off through the parent between them. It is the
// oldest item that can use that chip (DispatchQueue::take_behind), and it
// waits while a control message (a forget, an install) waits for the lane
// to empty (the Worker's LaneOpen), so a steady stream cannot hold one back.
//
// A chip is busy for the DispatchQueue while anything is in flight on its
// lane; chip_flight_ mirrors the lane's order. A chained task never passes a
// task queued for the same chip (DispatchQueue::names), so a chain cannot
// starve what waits for that chip. A waiting task is tried when it is
// submitted, when a producer of it is dispatched to a chip or completes, and
// when its chip's lane has room again.
#include <algorithm>
#include <optional>

#include "simpler/engine/engine_core.h"

namespace simpler {

bool EngineCore::chainable(const Record& r) const noexcept {
    return r.kind == TaskKind::NEXT_LEVEL && config_.next_level == ChildKind::CHIP && r.members == 1 &&
           r.target0.kind == ChildKind::CHIP && r.target0.named();
}

void EngineCore::chip_member_started(TaskId task, ChildRef chip) {
    chip_flight_.at(chip.index).push_back(task);
    note_chain_candidates(task);
}

void EngineCore::chip_member_done(TaskId task, ChildRef chip) {
    std::deque<TaskId>& flight = chip_flight_.at(chip.index);
    const auto it = std::find(flight.begin(), flight.end(), task);
    if (it != flight.end()) flight.erase(it);
    if (flight.empty()) {
        queue_.release(chip);
        return;
    }
    // Room on the lane again: what waits on the tasks still there may follow them.
    for (TaskId t : flight) note_chain_candidates(t);
}

void EngineCore::note_chain_candidates(TaskId task) {
    if (!graph_.contains(task)) return;
    for (TaskId s : graph_.successors(task))
        if (graph_.contains(s) && graph_.state(s) == TaskState::PENDING) chain_candidates_.push_back(s);
}

void EngineCore::take_behind(std::vector<Dispatch>& out, const LaneOpen& lane_open) {
    const std::vector<std::string>& lost = lost_[static_cast<size_t>(ChildKind::CHIP)];
    for (uint32_t c = 0; c < chip_flight_.size(); ++c) {
        std::deque<TaskId>& flight = chip_flight_[c];
        const ChildRef chip{ChildKind::CHIP, c};
        if (flight.empty() || flight.size() >= config_.chip_lane_depth || !lost.at(c).empty()) continue;
        if (lane_open && !lane_open(chip)) continue;
        while (flight.size() < config_.chip_lane_depth) {
            const std::optional<TaskId> id = queue_.take_behind(chip);
            if (!id) break;
            Record& r = record(*id);
            r.behind = true;  // READY until it finishes: a cancel may still withdraw it
            --r.undispatched;
            ++r.outstanding;
            out.push_back({TaskHandle{*id, r.run}, r.kind, 0, chip, r.callable, r.blob(0), &r.config(0)});
            chip_member_started(*id, chip);
        }
    }
}

void EngineCore::take_chained(std::vector<Dispatch>& out, const LaneOpen& lane_open) {
    const std::vector<std::string>& lost = lost_[static_cast<size_t>(ChildKind::CHIP)];
    // By index: a task chained here makes its own successors candidates.
    for (size_t c = 0; c < chain_candidates_.size(); ++c) {
        const TaskId id = chain_candidates_[c];
        Record* r = records_.find(id);
        if (r == nullptr || r->undispatched == 0 || !chainable(*r) || graph_.state(id) != TaskState::PENDING) continue;
        const ChildRef chip{ChildKind::CHIP, r->target0.index()};
        std::deque<TaskId>& flight = chip_flight_.at(chip.index);
        if (flight.size() >= config_.chip_lane_depth || !lost.at(chip.index).empty() || queue_.names(chip)) continue;
        Dispatch d{TaskHandle{id, r->run}, r->kind, 0, chip, r->callable, r->blob(0), &r->config(0)};
        if (!producers_on_lanes(*r, chip, lane_open, d)) continue;
        // Onto an empty lane only with producers elsewhere: the chip is then
        // busy for the queue, which must have nothing waiting for it.
        if (flight.empty() && !queue_.claim(chip)) continue;
        r->chained = true;
        r->across = d.lane_producer_count > 0;
        --r->undispatched;
        ++r->outstanding;
        out.push_back(d);
        chip_member_started(id, chip);
    }
    chain_candidates_.clear();
}

bool EngineCore::producers_on_lanes(const Record& r, ChildRef chip, const LaneOpen& lane_open, Dispatch& d) const {
    const std::deque<TaskId>& flight = chip_flight_.at(chip.index);
    const std::vector<std::string>& lost = lost_[static_cast<size_t>(ChildKind::CHIP)];
    for (TaskId p : r.preds) {
        if (!graph_.contains(p) || graph_.state(p) == TaskState::DONE) continue;
        const Record* producer = records_.find(p);
        // A group's member on a lane says nothing of its members elsewhere.
        if (producer == nullptr || producer->members != 1) return false;
        if (const auto at = std::find(flight.begin(), flight.end(), p); at != flight.end()) {
            d.after_mask |= 1u << static_cast<uint32_t>(flight.end() - at - 1);
            continue;
        }
        if (!config_.cross_chip || d.lane_producer_count == Dispatch::MAX_LANE_PRODUCERS) return false;
        uint32_t other = 0;
        while (other < chip_flight_.size() &&
               std::find(chip_flight_[other].begin(), chip_flight_[other].end(), p) == chip_flight_[other].end())
            ++other;
        // On no chip's lane (queued, or on another kind of child), or on a lane
        // whose next publish may wait (a control message): it goes through the parent.
        if (other == chip_flight_.size() || !lost.at(other).empty()) return false;
        if (lane_open && !lane_open(ChildRef{ChildKind::CHIP, other})) return false;
        d.lane_producers[d.lane_producer_count++] = {other, p};
    }
    return d.after_mask != 0 || d.lane_producer_count > 0;
}

}  // namespace simpler
