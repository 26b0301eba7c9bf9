// DispatchQueue against a model: one list of every queued item in ready order,
// walked whole on every take with the same reservation rules (an item that
// cannot leave holds the named children it needs and its count of "any"
// children per kind from later items; a later item's member, named or not,
// leaves only while its kind has a child beyond those claims). The queue keeps one queue per target and
// merges their heads; on seeded random programs of pushes, takes, releases,
// retirements and drops over chips, sub-workers and groups, both must hand out
// the same members to the same children in the same order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/engine/dispatch_queue.h"

using simpler::Assignment;
using simpler::CHILD_KIND_COUNT;
using simpler::ChildCounts;
using simpler::ChildKind;
using simpler::ChildRef;
using simpler::DispatchQueue;
using simpler::MemberTarget;
using simpler::TaskId;

namespace {

class ModelQueue {
public:
    explicit ModelQueue(const ChildCounts& n) {
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) state_[k].assign(n[k], FREE);
    }
    void push(TaskId task, std::vector<MemberTarget> members) { items_.push_back({task, std::move(members)}); }
    void release(ChildRef c) {
        if (at(c) == BUSY) at(c) = FREE;
    }
    void retire(ChildRef c) { at(c) = DEAD; }
    bool drop(TaskId task) {
        const auto it = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.task == task; });
        if (it == items_.end()) return false;
        items_.erase(it);
        return true;
    }
    [[nodiscard]] bool names(ChildRef c) const {
        return std::any_of(items_.begin(), items_.end(), [&](const Item& i) {
            return std::find(i.members.begin(), i.members.end(), MemberTarget::child(c)) != i.members.end();
        });
    }
    [[nodiscard]] size_t queued() const { return items_.size(); }

    std::vector<Assignment> take() {
        std::vector<Assignment> out;
        std::array<std::vector<bool>, CHILD_KIND_COUNT> reserved;
        std::array<uint32_t, CHILD_KIND_COUNT> held{};
        for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) reserved[k].assign(state_[k].size(), false);
        auto open = [&](const MemberTarget& m) {
            return state_[kind(m)][m.index()] == FREE && !reserved[kind(m)][m.index()];
        };
        auto any_open = [&](size_t k) {
            uint32_t n = 0;
            for (uint32_t i = 0; i < state_[k].size(); ++i) n += state_[k][i] == FREE && !reserved[k][i];
            return n - std::min(n, held[k]);
        };
        for (auto it = items_.begin(); it != items_.end();) {
            std::array<uint32_t, CHILD_KIND_COUNT> need{};
            bool go = true;
            for (const MemberTarget& m : it->members) {
                go = go && (!m.named() || open(m));
                ++need[kind(m)];  // a named child counts against its kind's claims too
            }
            for (size_t k = 0; k < CHILD_KIND_COUNT; ++k) go = go && need[k] <= any_open(k);
            if (!go) {
                for (const MemberTarget& m : it->members)
                    if (m.named()) reserved[kind(m)][m.index()] = true;
                for (const MemberTarget& m : it->members) held[kind(m)] += !m.named();
                ++it;
                continue;
            }
            for (const MemberTarget& t : it->members)  // named children first: no "any" member takes one
                if (t.named()) state_[kind(t)][t.index()] = BUSY;
            for (uint32_t m = 0; m < it->members.size(); ++m) {
                const MemberTarget& t = it->members[m];
                uint32_t index = t.named() ? t.index() : 0;
                if (!t.named()) {
                    while (state_[kind(t)][index] != FREE || reserved[kind(t)][index]) ++index;
                    state_[kind(t)][index] = BUSY;
                }
                out.push_back({it->task, m, ChildRef{t.kind, index}});
            }
            it = items_.erase(it);
        }
        return out;
    }

private:
    enum State : uint8_t { FREE, BUSY, DEAD };
    struct Item {
        TaskId task;
        std::vector<MemberTarget> members;
    };
    static size_t kind(const MemberTarget& m) { return static_cast<size_t>(m.kind); }
    State& at(ChildRef c) { return state_[static_cast<size_t>(c.kind)].at(c.index); }
    [[nodiscard]] State at(ChildRef c) const { return state_[static_cast<size_t>(c.kind)].at(c.index); }
    std::array<std::vector<State>, CHILD_KIND_COUNT> state_;
    std::vector<Item> items_;
};

bool same(const std::vector<Assignment>& a, const std::vector<Assignment>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].task != b[i].task || a[i].member != b[i].member || !(a[i].child == b[i].child)) return false;
    return true;
}

void run_program(uint64_t seed, uint32_t chips, uint32_t subs) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(chips) + " chip(s), " + std::to_string(subs) +
                 " sub-worker(s)");
    ChildCounts n{};
    n[static_cast<size_t>(ChildKind::CHIP)] = chips;
    n[static_cast<size_t>(ChildKind::SUB_WORKER)] = subs;
    DispatchQueue q(n);
    ModelQueue model(n);
    uint64_t state = seed * 2862933555777941757u + 3037000493u;
    auto next = [&](uint64_t bound) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return (state >> 33) % bound;
    };
    std::vector<ChildRef> children;
    for (uint32_t i = 0; i < chips; ++i) children.push_back({ChildKind::CHIP, i});
    for (uint32_t i = 0; i < subs; ++i) children.push_back({ChildKind::SUB_WORKER, i});
    std::vector<TaskId> pushed;
    TaskId task = 1;
    for (int step = 0; step < 4000; ++step) {
        const uint64_t op = next(100);
        if (op < 55) {  // push: mostly plain tasks, some groups
            std::vector<MemberTarget> members;
            const uint64_t shape = next(10);
            const size_t count = shape < 8 ? 1 : 2 + next(2);
            for (size_t m = 0; m < count; ++m) {
                const bool to_sub = subs > 0 && (chips == 0 || next(2) == 0);
                if (to_sub && next(3) != 0)
                    members.push_back(MemberTarget::any(ChildKind::SUB_WORKER));
                else if (to_sub)
                    members.push_back(MemberTarget::child({ChildKind::SUB_WORKER, uint32_t(next(subs))}));
                else
                    members.push_back(MemberTarget::child({ChildKind::CHIP, uint32_t(next(chips))}));
            }
            bool refused = false;
            try {
                q.push(task, members);
            } catch (const std::invalid_argument&) {
                refused = true;  // two members on one child, or more "any" than alive
            }
            if (!refused) {
                model.push(task, members);
                pushed.push_back(task);
            }
            ++task;
        } else if (op < 80) {
            std::vector<Assignment> got;
            q.take(got);
            const auto want = model.take();
            ASSERT_TRUE(same(got, want)) << "take " << step << ": " << got.size() << " left, model " << want.size();
        } else if (op < 97) {
            const ChildRef c = children[next(children.size())];
            q.release(c);
            model.release(c);
        } else if (op < 98) {
            const ChildRef c = children[next(children.size())];
            q.retire(c);
            model.retire(c);
        } else if (!pushed.empty()) {
            const TaskId t = pushed[next(pushed.size())];
            ASSERT_EQ(q.drop(t), model.drop(t)) << "drop of task " << t;
        }
        ASSERT_EQ(q.queued(), model.queued()) << "step " << step;
        for (const ChildRef c : children) ASSERT_EQ(q.names(c), model.names(c)) << "step " << step << ", " << c.name();
    }
}

}  // namespace

TEST(DispatchQueueModel, SeededProgramsLeaveAsTheWholeListWalkWould) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
        run_program(seed, 2, 2);
        run_program(seed, 3, 0);
        run_program(seed, 0, 3);
        run_program(seed, 1, 1);
        if (HasFatalFailure()) return;
    }
}
