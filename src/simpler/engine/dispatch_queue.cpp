#include "simpler/engine/dispatch_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace simpler {

DispatchQueue::DispatchQueue(const ChildCounts& children) {
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        pools_[k].state.assign(children[k], FREE);
        pools_[k].reserved.assign(children[k], 0);
        pools_[k].free = pools_[k].live = children[k];
    }
}

void DispatchQueue::set_state(Pool& p, uint32_t index, ChildState to) noexcept {
    ChildState& s = p.state[index];
    p.free -= s == FREE;
    p.live -= to == DEAD && s != DEAD;
    s = to;
    p.free += to == FREE;
}

void DispatchQueue::push(TaskId task, std::span<const MemberTarget> members) {
    check(task, members);
    push_checked(task, members);
}

void DispatchQueue::push_checked(TaskId task, std::span<const MemberTarget> members) {
    Item item{task, members.front(), {}, {}};
    if (members.size() > 1) item.group.assign(members.begin(), members.end());
    for (const MemberTarget& m : members)
        if (!m.named()) ++item.any_needed[static_cast<size_t>(m.kind)];
    items_.push_back(std::move(item));
}

void DispatchQueue::check(TaskId task, std::span<const MemberTarget> members) const {
    if (members.empty()) throw std::invalid_argument("task " + std::to_string(task) + ": a task needs a member");
    std::array<uint32_t, CHILD_KIND_COUNT> any{};
    for (size_t m = 0; m < members.size(); ++m) {
        const MemberTarget& t = members[m];
        const auto k = static_cast<size_t>(t.kind);
        if (!t.named()) {
            ++any[k];
            continue;
        }
        const size_t n = pools_[k].state.size();
        if (t.index() >= n)
            throw std::invalid_argument("task " + std::to_string(task) + " member " + std::to_string(m) + ": " +
                                        t.name() + " is not a child of this Worker (it has " + std::to_string(n) + " " +
                                        child_kind_name(t.kind) + "(s))");
    }
    if (members.size() > 1) {  // one member cannot name a child twice
        std::array<std::vector<uint8_t>, CHILD_KIND_COUNT> seen;
        for (const MemberTarget& t : members) {
            if (!t.named()) continue;
            const auto k = static_cast<size_t>(t.kind);
            seen[k].resize(pools_[k].state.size(), 0);
            if (seen[k][t.index()]++)
                throw std::invalid_argument("task " + std::to_string(task) + ": two group members target " + t.name() +
                                            "; a group runs its members at once, one per child");
        }
    }
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k)
        if (any[k] > 0 && any[k] > live_count(static_cast<ChildKind>(k)))
            throw std::invalid_argument("task " + std::to_string(task) + ": the group needs " + std::to_string(any[k]) +
                                        " " + child_kind_name(static_cast<ChildKind>(k)) +
                                        "(s) at once, the Worker has " +
                                        std::to_string(live_count(static_cast<ChildKind>(k))) + " alive");
}

void DispatchQueue::release(ChildRef child) {
    Pool& p = pool(child.kind);
    if (p.state.at(child.index) == BUSY) set_state(p, child.index, FREE);
}

void DispatchQueue::retire(ChildRef child) {
    Pool& p = pool(child.kind);
    if (child.index >= p.state.size())
        throw std::out_of_range("DispatchQueue: " + child.name() + " is not a child of this Worker");
    set_state(p, child.index, DEAD);
}

void DispatchQueue::take(std::vector<Assignment>& out) {
    if (head_ == items_.size()) return;  // every progress step asks, most often with nothing queued
    // Per kind: children FREE and not reserved by a waiting item (`open`), and
    // how many of those waiting items' "any" members have claimed (`any_held`).
    // When no kind has an open child beyond its claims, no later item can leave,
    // so the scan stops (a long queue of waiting tasks costs nothing per take).
    if (++take_stamp_ == 0) {  // the stamps wrapped: no stale one may equal a later take's
        for (Pool& p : pools_) std::fill(p.reserved.begin(), p.reserved.end(), 0);
        take_stamp_ = 1;
    }
    const uint32_t stamp = take_stamp_;
    std::array<uint32_t, CHILD_KIND_COUNT> open{};
    std::array<uint32_t, CHILD_KIND_COUNT> any_held{};
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) open[k] = pools_[k].free;
    auto available = [&](size_t k) { return open[k] - std::min(open[k], any_held[k]); };
    for (size_t i = head_; i < items_.size();) {
        const Item* it = &items_[i];
        uint32_t spare = 0;
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) spare += available(k);
        if (spare == 0) break;
        bool can_go = true;
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) can_go &= it->any_needed[k] <= available(k);
        for (const MemberTarget& m : it->members()) {
            if (!m.named()) continue;
            const Pool& p = pool(m.kind);
            can_go &= p.state[m.index()] == FREE && p.reserved[m.index()] != stamp;
        }
        if (!can_go) {
            for (const MemberTarget& m : it->members()) {
                if (!m.named()) continue;
                Pool& p = pool(m.kind);
                if (p.state[m.index()] == FREE && p.reserved[m.index()] != stamp) --open[static_cast<size_t>(m.kind)];
                p.reserved[m.index()] = stamp;
            }
            for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) any_held[k] += it->any_needed[k];
            ++i;
            continue;
        }
        for (uint32_t m = 0; m < it->members().size(); ++m) {
            const MemberTarget& t = it->members()[m];
            Pool& p = pool(t.kind);
            uint32_t index = 0;
            if (t.named()) {
                index = t.index();
            } else {
                while (p.state[index] != FREE || p.reserved[index] == stamp) ++index;
            }
            set_state(p, index, BUSY);
            --open[static_cast<size_t>(t.kind)];
            out.push_back({it->task, m, ChildRef{t.kind, index}});
        }
        erase(i);
        ++i;  // the next item (erase moved only the ones before i)
    }
    compact();
}

void DispatchQueue::erase(size_t at) {
    std::move_backward(items_.begin() + static_cast<ptrdiff_t>(head_), items_.begin() + static_cast<ptrdiff_t>(at),
                       items_.begin() + static_cast<ptrdiff_t>(at) + 1);
    items_[head_].group.clear();
    ++head_;
}

void DispatchQueue::compact() {
    if (head_ == items_.size()) {
        items_.clear();  // the capacity stays
        head_ = 0;
    } else if (head_ > items_.size() / 2) {
        items_.erase(items_.begin(), items_.begin() + static_cast<ptrdiff_t>(head_));
        head_ = 0;
    }
}

bool DispatchQueue::names(ChildRef child) const noexcept {
    const MemberTarget target = MemberTarget::child(child);
    return std::any_of(items_.begin() + static_cast<ptrdiff_t>(head_), items_.end(), [&](const Item& i) {
        const std::span<const MemberTarget> m = i.members();
        return std::find(m.begin(), m.end(), target) != m.end();
    });
}

bool DispatchQueue::drop(TaskId task) {
    const auto it = std::find_if(items_.begin() + static_cast<ptrdiff_t>(head_), items_.end(),
                                 [&](const Item& i) { return i.task == task; });
    if (it == items_.end()) return false;
    erase(static_cast<size_t>(it - items_.begin()));
    compact();
    return true;
}

}  // namespace simpler
