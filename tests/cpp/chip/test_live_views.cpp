// LiveViews: a reader follows the live writers it meets, a writer the live
// writers and readers it meets, readers never order readers, NO_DEP takes no
// part, a covering write supersedes, a removed task orders nothing; and, over
// random tasks of tiles, transposed, strided and 1-D views of two backings with
// tasks completing along the way, against enumerated element sets: every live
// task a new task conflicts with is among its ancestors, every edge joins two
// conflicting tasks, and producer_task / overlap_version say what they promise.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/live_views.h"
#include "simpler/chip/tile.h"

using namespace simpler::chip;

namespace {

constexpr uint32_t N = 16;  // each backing is N x N floats
float g_a[N * N];
float g_b[N * N];

Tensor matrix(const float* base) { return chip_test::adopt(chip_test::view(base, sizeof g_a, 0, {N, N}, {N, 1})); }

Tensor rows(const float* base, uint32_t r0, uint32_t r1) {
    Tensor t{};
    EXPECT_TRUE(make_row_tile(matrix(base), r0, r1, t));
    return t;
}

std::vector<uint32_t> add(LiveViews& lv, uint32_t slot, uint64_t task, std::vector<Tensor>& ts,
                          const std::vector<TensorArgType>& tags) {
    std::vector<int32_t> raw;
    for (TensorArgType t : tags) raw.push_back(static_cast<int32_t>(t));
    const auto preds = lv.add_task(slot, task, ts.data(), raw.data(), static_cast<uint32_t>(ts.size()));
    std::vector<uint32_t> out(preds.begin(), preds.end());
    std::sort(out.begin(), out.end());
    return out;
}

using V = std::vector<uint32_t>;
using TA = TensorArgType;

}  // namespace

TEST(LiveViews, ReadersFollowWritersAndWritersFollowBoth) {
    LiveViews lv(8);
    std::vector<Tensor> w{rows(g_a, 0, 4)}, r1{rows(g_a, 2, 3)}, r2{rows(g_a, 0, 1)}, w2{rows(g_a, 3, 8)};
    EXPECT_EQ(add(lv, 0, 0, w, {TA::OUTPUT_EXISTING}), V{});
    EXPECT_EQ(add(lv, 1, 1, r1, {TA::INPUT}), V{0});
    EXPECT_EQ(add(lv, 2, 2, r2, {TA::INPUT}), V{0});  // readers never order readers
    EXPECT_EQ(add(lv, 3, 3, w2, {TA::INOUT}), (V{0}));  // meets w (row 3); r1 (row 2) and r2 (row 0) not
    std::vector<Tensor> w3{rows(g_a, 0, 3)};
    EXPECT_EQ(add(lv, 4, 4, w3, {TA::OUTPUT_EXISTING}), (V{0, 1, 2}));
    std::vector<Tensor> other{rows(g_b, 0, 8)};
    EXPECT_EQ(add(lv, 5, 5, other, {TA::INOUT}), V{});  // another backing
    std::vector<Tensor> nodep{rows(g_a, 0, 8)};
    EXPECT_EQ(add(lv, 6, 6, nodep, {TA::NO_DEP}), V{});
    EXPECT_EQ(lv.size(), 4u);  // w3 superseded r1 and r2; the NO_DEP view is not filed
}

TEST(LiveViews, ACoveringWriteSupersedesAndARemovedTaskOrdersNothing) {
    LiveViews lv(8);
    std::vector<Tensor> w0{rows(g_a, 0, 2)}, w1{rows(g_a, 0, 4)}, part{rows(g_a, 1, 6)}, r{rows(g_a, 0, 8)};
    EXPECT_EQ(add(lv, 0, 0, w0, {TA::OUTPUT_EXISTING}), V{});
    EXPECT_EQ(add(lv, 1, 1, w1, {TA::OUTPUT_EXISTING}), V{0});  // covers w0: w0 leaves
    EXPECT_EQ(lv.size(), 1u);
    EXPECT_EQ(add(lv, 2, 2, part, {TA::INOUT}), V{1});  // partial: w1 stays
    EXPECT_EQ(add(lv, 3, 3, r, {TA::INPUT}), (V{1, 2}));  // w0 through w1
    EXPECT_EQ(r[0].producer_task, 2u);
    EXPECT_EQ(r[0].overlap_version, 3);
    lv.remove_task(1, w1.data(), 1);
    lv.remove_task(2, part.data(), 1);
    lv.remove_task(0, w0.data(), 1);  // superseded already: nothing to take out
    std::vector<Tensor> r2{rows(g_a, 0, 8)};
    EXPECT_EQ(add(lv, 4, 4, r2, {TA::INPUT}), V{});
    EXPECT_EQ(r2[0].producer_task, NO_PRODUCER);
    lv.remove_task(3, r.data(), 1);
    lv.remove_task(4, r2.data(), 1);
    EXPECT_EQ(lv.size(), 0u);
    lv.clear();
    std::vector<Tensor> w5{rows(g_a, 0, 1)};
    (void)add(lv, 5, 5, w5, {TA::OUTPUT_EXISTING});
    EXPECT_EQ(w5[0].overlap_version, 0);  // a new run counts from 0
}

TEST(LiveViews, ATasksOwnViewsOrderNothing) {
    LiveViews lv(4);
    std::vector<Tensor> both{rows(g_a, 0, 4), rows(g_a, 0, 4)};
    EXPECT_EQ(add(lv, 0, 0, both, {TA::INPUT, TA::OUTPUT_EXISTING}), V{});
    std::vector<Tensor> next{rows(g_a, 0, 1)};
    EXPECT_EQ(add(lv, 1, 1, next, {TA::INPUT}), V{0});
    EXPECT_EQ(next[0].producer_task, 0u);
}

namespace {

using Elems = std::bitset<N * N>;

Elems elems_of(const Tensor& t) {
    Elems e;
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    for (;;) {
        uint64_t off = t.start_offset;
        for (uint32_t d = 0; d < t.ndims; ++d) off += uint64_t{idx[d]} * t.strides[d];
        e.set(off);
        uint32_t d = t.ndims;
        while (d-- > 0) {
            if (++idx[d] < t.shapes[d]) break;
            idx[d] = 0;
        }
        if (d == UINT32_MAX) return e;
    }
}

// A random view of one N x N backing: a tile, its transpose, every other
// column of a tile, or a 1-D run of the backing.
Tensor random_view(std::mt19937& rng, const float* base) {
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    const uint32_t kind = pick(0, 3);
    if (kind == 3) {
        const uint32_t begin = pick(0, N * N - 1), len = pick(1, N * N - begin);
        return chip_test::adopt(chip_test::view(base, sizeof g_a, begin, {len}, {1}));
    }
    const uint32_t r0 = pick(0, N - 1), c0 = pick(0, N - 1);
    const uint32_t offsets[2] = {r0, c0}, shapes[2] = {pick(1, N - r0), pick(1, N - c0)};
    Tensor tile{};
    EXPECT_TRUE(make_tile(matrix(base), offsets, shapes, tile));
    if (kind == 1) {
        Tensor t{};
        EXPECT_TRUE(make_transposed(tile, 0, 1, t));
        return t;
    }
    if (kind == 2 && tile.shapes[1] >= 2) {
        tile.shapes[1] = (tile.shapes[1] + 1) / 2;
        tile.strides[1] = 2;
        refresh_derived(tile);
    }
    return tile;
}

struct Task {
    std::vector<Tensor> tensors;
    std::vector<TensorArgType> tags;
    std::vector<Elems> elems;
    std::vector<std::pair<uint32_t, uint64_t>> preds;  // (slot, task id)
    uint64_t id = 0;
    bool live = false;
};

bool conflicts(const Task& a, const Task& b) {
    for (size_t i = 0; i < a.tensors.size(); ++i)
        for (size_t j = 0; j < b.tensors.size(); ++j) {
            if (a.tags[i] == TA::NO_DEP || b.tags[j] == TA::NO_DEP) continue;
            if (a.tensors[i].addr != b.tensors[j].addr) continue;
            if (!tag_writes(a.tags[i]) && !tag_writes(b.tags[j])) continue;
            if ((a.elems[i] & b.elems[j]).any()) return true;
        }
    return false;
}

}  // namespace

TEST(LiveViews, RandomTasksFollowEveryLiveConflictAndNothingElse) {
    constexpr uint32_t SLOTS = 48;
    const TA tag_choices[] = {TA::INPUT, TA::INPUT, TA::OUTPUT_EXISTING, TA::INOUT, TA::NO_DEP};
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        LiveViews lv(SLOTS);
        std::vector<Task> ring(SLOTS);
        std::map<uint64_t, int32_t> writes;  // backing addr -> writing views filed this run
        uint64_t next_id = 0;
        for (int step = 0; step < 600; ++step) {
            // Complete a random live task whose predecessors completed, or submit one to a free slot.
            std::vector<uint32_t> live, free, done;
            for (uint32_t s = 0; s < SLOTS; ++s) (ring[s].live ? live : free).push_back(s);
            const auto is_live = [&](std::pair<uint32_t, uint64_t> p) {
                return ring[p.first].live && ring[p.first].id == p.second;
            };
            for (uint32_t s : live)
                if (std::none_of(ring[s].preds.begin(), ring[s].preds.end(), is_live)) done.push_back(s);
            if (free.empty() || (!done.empty() && rng() % 3 == 0)) {
                const uint32_t s = done[rng() % done.size()];
                lv.remove_task(s, ring[s].tensors.data(), static_cast<uint32_t>(ring[s].tensors.size()));
                ring[s].live = false;
                continue;
            }
            const uint32_t slot = free[rng() % free.size()];
            Task t;
            t.id = next_id++;
            const uint32_t count = 1 + rng() % 3;
            std::vector<int32_t> raw;
            for (uint32_t i = 0; i < count; ++i) {
                t.tensors.push_back(random_view(rng, rng() % 2 ? g_a : g_b));
                t.tags.push_back(tag_choices[rng() % 5]);
                t.elems.push_back(elems_of(t.tensors.back()));
                raw.push_back(static_cast<int32_t>(t.tags.back()));
            }
            // What producer_task and overlap_version must say, before the task is filed.
            std::vector<uint64_t> producer(count, NO_PRODUCER);
            std::vector<int32_t> version(count);
            std::map<uint64_t, int32_t> seen = writes;
            for (uint32_t i = 0; i < count; ++i) {
                if (t.tags[i] == TA::NO_DEP) continue;
                for (uint32_t s : live)
                    for (size_t j = 0; j < ring[s].tensors.size(); ++j)
                        if (tag_writes(ring[s].tags[j]) && ring[s].tensors[j].addr == t.tensors[i].addr &&
                            (ring[s].elems[j] & t.elems[i]).any())
                            producer[i] = producer[i] == NO_PRODUCER ? ring[s].id : std::max(producer[i], ring[s].id);
                version[i] = seen[t.tensors[i].addr];
                if (tag_writes(t.tags[i])) ++seen[t.tensors[i].addr];
            }
            writes = seen;
            const auto preds = lv.add_task(slot, t.id, t.tensors.data(), raw.data(), count);
            for (uint32_t p : preds) t.preds.emplace_back(p, ring[p].id);
            t.live = true;
            for (uint32_t i = 0; i < count; ++i) {
                if (t.tags[i] == TA::NO_DEP) continue;
                EXPECT_EQ(t.tensors[i].producer_task, producer[i])
                    << "seed " << seed << " step " << step << " tensor " << i;
                EXPECT_EQ(t.tensors[i].overlap_version, version[i]) << "seed " << seed << " step " << step;
            }
            // Every edge joins two conflicting live tasks, once.
            std::set<uint32_t> distinct;
            for (const auto& [p, id] : t.preds) {
                EXPECT_TRUE(distinct.insert(p).second);
                EXPECT_TRUE(ring[p].live);
                EXPECT_TRUE(conflicts(ring[p], t)) << "a false edge, seed " << seed << " step " << step;
            }
            // Every live task it conflicts with is an ancestor (through live tasks).
            std::set<uint32_t> ancestors;
            std::vector<uint32_t> stack;
            for (const auto& [p, id] : t.preds) stack.push_back(p);
            while (!stack.empty()) {
                const uint32_t p = stack.back();
                stack.pop_back();
                if (!ancestors.insert(p).second) continue;
                for (const auto& q : ring[p].preds)
                    if (is_live(q)) stack.push_back(q.first);
            }
            for (uint32_t s : live) {
                if (conflicts(ring[s], t)) {
                    EXPECT_TRUE(ancestors.contains(s)) << "a missing order, seed " << seed << " step " << step;
                }
            }
            ring[slot] = std::move(t);
        }
    }
}
