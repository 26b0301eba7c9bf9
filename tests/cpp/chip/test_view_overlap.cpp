// views_may_overlap: disjoint only on proof (bounding ranges, or per-axis on a
// shared row-major lattice); everything else is conservatively overlapping.
#include <gtest/gtest.h>

#include "chip_fixtures.h"
#include "simpler/chip/view_overlap.h"

using chip_test::adopt;
using chip_test::view;
using simpler::chip::views_may_overlap;

namespace {
float g_buf[16 * 16];
}

TEST(ViewOverlap, DisjointByteRangesDoNotOverlap) {
    EXPECT_FALSE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {64}, {1})),
                                   adopt(view(g_buf, sizeof g_buf, 64, {64}, {1}))));
    EXPECT_TRUE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {65}, {1})),
                                  adopt(view(g_buf, sizeof g_buf, 64, {64}, {1}))));
}

TEST(ViewOverlap, InterleavedColumnBlocksOfOneMatrixAreDisjoint) {
    // x[:, 0:4] and x[:, 8:12] of a 16x16 matrix: bounding ranges interleave.
    EXPECT_FALSE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {16, 4}, {16, 1})),
                                   adopt(view(g_buf, sizeof g_buf, 8, {16, 4}, {16, 1}))));
    EXPECT_TRUE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {16, 4}, {16, 1})),
                                  adopt(view(g_buf, sizeof g_buf, 3, {16, 4}, {16, 1}))));
}

TEST(ViewOverlap, ATransposedPairIsConservativelyOverlapping) {
    EXPECT_TRUE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {16, 4}, {16, 1})),
                                  adopt(view(g_buf, sizeof g_buf, 8, {4, 16}, {1, 16}))));
}

TEST(ViewOverlap, DifferentBackingsNeverOverlap) {
    float other[4] = {};
    EXPECT_FALSE(views_may_overlap(adopt(view(g_buf, sizeof g_buf, 0, {4}, {1})),
                                   adopt(view(other, sizeof other, 0, {4}, {1}))));
}
