// RegionIndex: every filed range that meets a query is reported exactly once,
// and none that does not, against a linear scan.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "simpler/view/region_index.h"

using namespace simpler;

using simpler::RegionIndex;

TEST(RegionIndex, ReportsExactlyTheRangesThatMeetTheQuery) {
    std::mt19937_64 rng(3);
    RegionIndex index;
    struct Live {
        uint32_t id;
        uint64_t begin, end;
    };
    std::vector<Live> live;
    uint32_t next = 0;
    for (int step = 0; step < 20000; ++step) {
        const uint64_t op = rng() % 10;
        if (op < 5 || live.empty()) {
            const uint64_t begin = rng() % 100000;
            const uint64_t len = 1 + (rng() % 4 == 0 ? rng() % 50000 : rng() % 300);
            index.insert(next, begin, begin + len);
            live.push_back({next++, begin, begin + len});
        } else if (op < 7) {
            const size_t k = rng() % live.size();
            EXPECT_TRUE(index.erase(live[k].id, live[k].begin, live[k].end));
            live[k] = live.back();
            live.pop_back();
        } else {
            const uint64_t a = rng() % 110000;
            const uint64_t b = a + 1 + rng() % 2000;
            std::vector<uint32_t> got, want;
            index.for_each_overlapping(a, b, [&](const RegionIndex::Item& item) { got.push_back(item.id); });
            for (const Live& l : live)
                if (l.begin < b && a < l.end) want.push_back(l.id);
            std::sort(got.begin(), got.end());
            std::sort(want.begin(), want.end());
            ASSERT_EQ(got, want) << "query [" << a << ", " << b << ")";
        }
        ASSERT_EQ(index.size(), live.size());
    }
}

TEST(RegionIndex, TouchingRangesDoNotMeetAndErasingTwiceFails) {
    RegionIndex index;
    index.insert(1, 0, 64);
    int hits = 0;
    index.for_each_overlapping(64, 128, [&](const RegionIndex::Item&) { ++hits; });
    EXPECT_EQ(hits, 0);
    index.for_each_overlapping(63, 64, [&](const RegionIndex::Item&) { ++hits; });
    EXPECT_EQ(hits, 1);
    EXPECT_TRUE(index.erase(1, 0, 64));
    EXPECT_FALSE(index.erase(1, 0, 64));
    EXPECT_TRUE(index.empty());
}

TEST(RegionIndex, HugeRangesNearTheTopOfTheAddressSpace) {
    RegionIndex index;
    index.insert(1, 0, UINT64_MAX);
    index.insert(2, UINT64_MAX - 10, UINT64_MAX);
    std::vector<uint32_t> got;
    index.for_each_overlapping(UINT64_MAX - 5, UINT64_MAX, [&](const RegionIndex::Item& i) { got.push_back(i.id); });
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<uint32_t>{1, 2}));
}

TEST(RegionIndex, GrowsPastTheFlatArrayAndBackAgain) {
    RegionIndex index;
    const uint32_t n = RegionIndex::SMALL_LIMIT * 3;
    for (int round = 0; round < 2; ++round) {
        for (uint32_t i = 0; i < n; ++i) index.insert(i, uint64_t{i} * 10, uint64_t{i} * 10 + 10);
        std::vector<uint32_t> got;
        index.for_each_overlapping(95, 125, [&](const RegionIndex::Item& it) { got.push_back(it.id); });
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, (std::vector<uint32_t>{9, 10, 11, 12}));
        for (uint32_t i = 0; i < n; ++i) EXPECT_TRUE(index.erase(i, uint64_t{i} * 10, uint64_t{i} * 10 + 10));
        EXPECT_TRUE(index.empty());
        int hits = 0;
        index.for_each_overlapping(0, UINT64_MAX, [&](const RegionIndex::Item&) { ++hits; });
        EXPECT_EQ(hits, 0);
    }
}

// Tiles filed in address order, each looked up before it is filed (a batch of
// tiles): a level whose ranges all end before the query is skipped without a
// descent, and nothing that meets is missed, also once the last ones leave.
TEST(RegionIndex, TilesFiledInAddressOrderFindExactlyTheTilesTheyMeet) {
    RegionIndex index;
    std::vector<std::pair<uint64_t, uint64_t>> live;  // (begin, end) by id
    auto expect_matches = [&](uint64_t a, uint64_t b) {
        std::vector<uint32_t> got, want;
        index.for_each_overlapping(a, b, [&](const RegionIndex::Item& item) { got.push_back(item.id); });
        for (uint32_t id = 0; id < live.size(); ++id)
            if (live[id].first < live[id].second && live[id].first < b && a < live[id].second) want.push_back(id);
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, want) << "query [" << a << ", " << b << ")";
    };
    const uint32_t n = RegionIndex::SMALL_LIMIT * 4;
    for (uint32_t k = 0; k < n; ++k) {
        // Every fourth tile overlaps the one before by half; the others touch it.
        const uint64_t begin = k % 4 == 3 ? live.back().first + 128 : (live.empty() ? 0 : live.back().second);
        expect_matches(begin, begin + 256);
        index.insert(k, begin, begin + 256);
        live.emplace_back(begin, begin + 256);
    }
    // A shorter range at a lower level, then the last tiles leave: the levels'
    // kept ends are bounds, never too short.
    index.insert(n, 100, 101);
    live.emplace_back(100, 101);
    for (uint32_t k = n - 8; k < n; ++k) {
        ASSERT_TRUE(index.erase(k, live[k].first, live[k].second));
        live[k] = {0, 0};
    }
    for (uint64_t a = 0; a < live[n - 9].second + 600; a += 64) expect_matches(a, a + 300);
}
