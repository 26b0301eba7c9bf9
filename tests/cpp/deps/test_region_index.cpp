// RegionIndex: every filed range that meets a query is reported exactly once,
// and none that does not, against a linear scan.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "simpler/deps/region_index.h"

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
