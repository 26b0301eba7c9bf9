#include "simpler/engine/dispatch_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace simpler {

DispatchQueue::DispatchQueue(const ChildCounts& children) {
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        const auto kind = static_cast<ChildKind>(k);
        pools_[k].state.assign(children[k], FREE);
        pools_[k].reserved.assign(children[k], 0);
        pools_[k].free = pools_[k].live = children[k];
        any_queue_[k] = static_cast<uint32_t>(singles_.size());
        singles_.push_back({MemberTarget::any(kind), {}, 0});
        named_base_[k] = static_cast<uint32_t>(singles_.size());
        for (uint32_t i = 0; i < children[k]; ++i) singles_.push_back({MemberTarget::child({kind, i}), {}, 0});
    }
}

void DispatchQueue::SingleQueue::pop_front() noexcept {
    ++head;
    compact();
}

void DispatchQueue::SingleQueue::compact() noexcept {
    if (head == items.size()) {
        items.clear();  // the capacity stays
        head = 0;
    } else if (head > items.size() / 2) {
        items.erase(items.begin(), items.begin() + static_cast<ptrdiff_t>(head));
        head = 0;
    }
}

bool DispatchQueue::SingleQueue::erase(TaskId task) {
    const auto it = std::find_if(items.begin() + static_cast<ptrdiff_t>(head), items.end(),
                                 [&](const Single& s) { return s.task == task; });
    if (it == items.end()) return false;
    items.erase(it);
    compact();
    return true;
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
    if (members.size() == 1) {
        singles_[queue_of(members.front())].items.push_back({task, next_ready_});
    } else {
        Group g{task, next_ready_, {members.begin(), members.end()}, {}};
        for (const MemberTarget& m : members)
            if (!m.named()) ++g.any_needed[static_cast<size_t>(m.kind)];
        groups_.push_back(std::move(g));
    }
    ++next_ready_;
    ++queued_;
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
    if (queued_ == 0) return;  // every progress step asks, most often with nothing queued
    // Per kind: children FREE and not reserved by a waiting item (`open`), and
    // how many of those waiting items' "any" members have claimed (`any_held`).
    if (++take_stamp_ == 0) {  // the stamps wrapped: no stale one may equal a later take's
        for (Pool& p : pools_) std::fill(p.reserved.begin(), p.reserved.end(), 0);
        take_stamp_ = 1;
    }
    const uint32_t stamp = take_stamp_;
    std::array<uint32_t, CHILD_KIND_COUNT> open{};
    std::array<uint32_t, CHILD_KIND_COUNT> any_held{};
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) open[k] = pools_[k].free;
    auto available = [&](size_t k) { return open[k] - std::min(open[k], any_held[k]); };
    auto free_now = [&](const MemberTarget& m) {
        const Pool& p = pool(m.kind);
        return p.state[m.index()] == FREE && p.reserved[m.index()] != stamp;
    };
    // Marks busy the child `t` names, or for "any" the first FREE one no waiting
    // item reserved, and returns its index.
    auto occupy = [&](const MemberTarget& t) {
        Pool& p = pool(t.kind);
        uint32_t index = t.index();
        if (!t.named())
            while (p.state[index] != FREE || p.reserved[index] == stamp) ++index;
        set_state(p, index, BUSY);
        --open[static_cast<size_t>(t.kind)];
        return index;
    };
    // The heads that could leave, earliest ready first. Left out: a named
    // child's queue while that child is not FREE, an "any" queue while its kind
    // has no FREE child (neither changes for the better within a take).
    const auto later = [](const Head& a, const Head& b) { return a.ready > b.ready; };
    heads_.clear();
    for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) {
        if (open[k] == 0) continue;
        if (const SingleQueue& q = singles_[any_queue_[k]]; !q.empty())
            heads_.push_back({q.front().ready, any_queue_[k], 0});
        const Pool& p = pools_[k];
        for (uint32_t i = 0; i < p.state.size(); ++i)
            if (const SingleQueue& q = singles_[named_base_[k] + i]; p.state[i] == FREE && !q.empty())
                heads_.push_back({q.front().ready, named_base_[k] + i, 0});
    }
    if (!groups_.empty()) heads_.push_back({groups_.front().ready, GROUPS, 0});
    std::make_heap(heads_.begin(), heads_.end(), later);
    bool groups_left = false;
    while (!heads_.empty()) {
        // When no kind has an open child beyond its claims, nothing later can leave.
        uint32_t spare = 0;
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) spare += available(k);
        if (spare == 0) break;
        std::pop_heap(heads_.begin(), heads_.end(), later);
        const Head h = heads_.back();
        heads_.pop_back();
        if (h.source != GROUPS) {
            SingleQueue& q = singles_[h.source];
            const MemberTarget t = q.target;
            const auto k = static_cast<size_t>(t.kind);
            if (available(k) == 0 || (t.named() && !free_now(t))) {
                // Its queue closes for this take: every later item in it needs the
                // same. A waiting "any" item claims a child of its kind (it had
                // none to claim: the kind stays without an available child).
                if (!t.named()) ++any_held[k];
                continue;
            }
            out.push_back({q.front().task, 0, ChildRef{t.kind, occupy(t)}});
            q.pop_front();
            --queued_;
            // A named child is busy now; an "any" queue may go on.
            if (!t.named() && !q.empty()) {
                heads_.push_back({q.front().ready, h.source, 0});
                std::push_heap(heads_.begin(), heads_.end(), later);
            }
            continue;
        }
        Group& g = groups_[h.group];
        bool can_go = true;
        std::array<uint32_t, CHILD_KIND_COUNT> need = g.any_needed;
        for (const MemberTarget& m : g.members) {
            if (!m.named()) continue;
            can_go &= free_now(m);
            ++need[static_cast<size_t>(m.kind)];
        }
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) can_go &= need[k] <= available(k);
        if (can_go) {
            // The named children first, so that no "any" member takes one of them.
            for (const MemberTarget& t : g.members)
                if (t.named()) occupy(t);
            for (uint32_t m = 0; m < g.members.size(); ++m) {
                const MemberTarget& t = g.members[m];
                out.push_back({g.task, m, ChildRef{t.kind, t.named() ? t.index() : occupy(t)}});
            }
            g.members.clear();  // left: erased after the merge
            groups_left = true;
            --queued_;
        } else {
            // It waits, and holds what it names and its "any" count from later items.
            for (const MemberTarget& m : g.members) {
                if (!m.named()) continue;
                Pool& p = pool(m.kind);
                if (free_now(m)) --open[static_cast<size_t>(m.kind)];
                p.reserved[m.index()] = stamp;
            }
            for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) any_held[k] += g.any_needed[k];
        }
        if (h.group + 1 < groups_.size()) {
            heads_.push_back({groups_[h.group + 1].ready, GROUPS, h.group + 1});
            std::push_heap(heads_.begin(), heads_.end(), later);
        }
    }
    if (groups_left) std::erase_if(groups_, [](const Group& g) { return g.members.empty(); });
}

std::optional<TaskId> DispatchQueue::take_behind(ChildRef child) {
    const auto k = static_cast<size_t>(child.kind);
    const Pool& p = pools_[k];
    if (child.index >= p.state.size() || p.state[child.index] != BUSY) return std::nullopt;
    SingleQueue& q = singles_[named_base_[k] + child.index];
    if (q.empty()) return std::nullopt;
    const uint64_t ready = q.front().ready;
    if (const SingleQueue& any = singles_[any_queue_[k]]; !any.empty() && any.front().ready < ready)
        return std::nullopt;
    const MemberTarget named = MemberTarget::child(child);
    for (const Group& g : groups_) {
        if (g.ready > ready) break;  // in ready order
        if (g.any_needed[k] > 0 || std::find(g.members.begin(), g.members.end(), named) != g.members.end())
            return std::nullopt;
    }
    const TaskId task = q.front().task;
    q.pop_front();
    --queued_;
    return task;
}

bool DispatchQueue::claim(ChildRef child) {
    const auto k = static_cast<size_t>(child.kind);
    Pool& p = pools_[k];
    if (child.index >= p.state.size() || p.state[child.index] != FREE || names(child)) return false;
    if (!singles_[any_queue_[k]].empty()) return false;
    if (std::any_of(groups_.begin(), groups_.end(), [&](const Group& g) { return g.any_needed[k] > 0; })) return false;
    set_state(p, child.index, BUSY);
    return true;
}

bool DispatchQueue::names(ChildRef child) const noexcept {
    const MemberTarget target = MemberTarget::child(child);
    if (!singles_[queue_of(target)].empty()) return true;
    return std::any_of(groups_.begin(), groups_.end(), [&](const Group& g) {
        return std::find(g.members.begin(), g.members.end(), target) != g.members.end();
    });
}

bool DispatchQueue::drop(TaskId task) {
    for (SingleQueue& q : singles_) {
        if (q.erase(task)) {
            --queued_;
            return true;
        }
    }
    const auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.task == task; });
    if (it == groups_.end()) return false;
    groups_.erase(it);
    --queued_;
    return true;
}

}  // namespace simpler
