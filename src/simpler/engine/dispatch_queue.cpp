#include "simpler/engine/dispatch_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace simpler {

DispatchQueue::DispatchQueue(uint32_t num_chips, uint32_t num_sub_workers)
    : chip_state_(num_chips, FREE), sub_state_(num_sub_workers, FREE), reserved_(num_chips, 0) {}

void DispatchQueue::push(TaskId task, std::span<const MemberTarget> members) {
    check(task, members);
    uint32_t subs = 0;
    for (const MemberTarget& m : members) subs += m.chip == ANY_SUB_WORKER;
    items_.push_back(Item{task, {members.begin(), members.end()}, subs});
}

void DispatchQueue::check(TaskId task, std::span<const MemberTarget> members) const {
    if (members.empty()) throw std::invalid_argument("task " + std::to_string(task) + ": a task needs a member");
    uint32_t subs = 0;
    std::vector<uint8_t> seen(chip_state_.size(), 0);
    for (size_t m = 0; m < members.size(); ++m) {
        const int32_t chip = members[m].chip;
        if (chip == ANY_SUB_WORKER) {
            ++subs;
            continue;
        }
        if (chip < 0 || static_cast<size_t>(chip) >= chip_state_.size())
            throw std::invalid_argument("task " + std::to_string(task) + " member " + std::to_string(m) +
                                        ": worker=" + std::to_string(chip) + " is not a chip of this Worker (it has " +
                                        std::to_string(chip_state_.size()) + ")");
        if (seen[static_cast<size_t>(chip)]++)
            throw std::invalid_argument("task " + std::to_string(task) + ": two group members target chip " +
                                        std::to_string(chip) + "; a group runs its members at once, one per chip");
    }
    if (subs > sub_state_.size())
        throw std::invalid_argument("task " + std::to_string(task) + ": the group needs " + std::to_string(subs) +
                                    " sub-workers at once, the Worker has " + std::to_string(sub_state_.size()));
}

void DispatchQueue::release_chip(uint32_t chip) {
    if (chip_state_.at(chip) == BUSY) chip_state_[chip] = FREE;
}
void DispatchQueue::release_sub_worker(uint32_t sub) {
    if (sub_state_.at(sub) == BUSY) sub_state_[sub] = FREE;
}
void DispatchQueue::retire_chip(uint32_t chip) { chip_state_.at(chip) = DEAD; }
void DispatchQueue::retire_sub_worker(uint32_t sub) { sub_state_.at(sub) = DEAD; }

uint32_t DispatchQueue::free_sub_workers() const noexcept {
    return static_cast<uint32_t>(std::count(sub_state_.begin(), sub_state_.end(), FREE));
}

uint32_t DispatchQueue::live_sub_workers() const noexcept {
    return static_cast<uint32_t>(sub_state_.size() - std::count(sub_state_.begin(), sub_state_.end(), DEAD));
}

void DispatchQueue::take(std::vector<Assignment>& out) {
    std::fill(reserved_.begin(), reserved_.end(), 0);
    uint32_t subs_free = free_sub_workers();
    uint32_t subs_reserved = 0;
    // Chips still FREE and not reserved; when none is left and no sub-worker is
    // either, no later item can leave, so the scan stops (a long queue of
    // waiting tasks costs nothing per take).
    auto chips_open = static_cast<uint32_t>(std::count(chip_state_.begin(), chip_state_.end(), FREE));
    for (auto it = items_.begin(); it != items_.end();) {
        if (chips_open == 0 && subs_reserved >= subs_free) break;
        bool can_go = it->sub_workers_needed + subs_reserved <= subs_free;
        for (const MemberTarget& m : it->members)
            if (m.chip != ANY_SUB_WORKER)
                can_go &= chip_state_[static_cast<size_t>(m.chip)] == FREE && !reserved_[static_cast<size_t>(m.chip)];
        if (!can_go) {
            for (const MemberTarget& m : it->members) {
                if (m.chip == ANY_SUB_WORKER) continue;
                const auto c = static_cast<size_t>(m.chip);
                if (chip_state_[c] == FREE && !reserved_[c]) --chips_open;
                reserved_[c] = 1;
            }
            subs_reserved += it->sub_workers_needed;
            ++it;
            continue;
        }
        size_t next_sub = 0;
        for (uint32_t m = 0; m < it->members.size(); ++m) {
            const int32_t chip = it->members[m].chip;
            if (chip != ANY_SUB_WORKER) {
                chip_state_[static_cast<size_t>(chip)] = BUSY;
                --chips_open;
                out.push_back({it->task, m, true, static_cast<uint32_t>(chip)});
                continue;
            }
            while (sub_state_[next_sub] != FREE) ++next_sub;
            sub_state_[next_sub] = BUSY;
            out.push_back({it->task, m, false, static_cast<uint32_t>(next_sub)});
        }
        subs_free -= it->sub_workers_needed;
        it = items_.erase(it);
    }
}

bool DispatchQueue::drop(TaskId task) {
    auto it = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.task == task; });
    if (it == items_.end()) return false;
    items_.erase(it);
    return true;
}

}  // namespace simpler
