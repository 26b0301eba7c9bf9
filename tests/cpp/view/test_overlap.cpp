// The worked examples of docs/explanation/dependencies.md ("Worked examples"), each a test,
// and the different-stride extension beyond them.
#include <gtest/gtest.h>

#include "simpler/view/wire_overlap.h"
#include "view_fixtures.h"

using namespace simpler;

using simpler::overlap;
using simpler::OverlapAnswer;
using simpler::OverlapOptions;
using view_test::backing;
using view_test::raw_view;
using view_test::view;

namespace {

constexpr OverlapAnswer NONE{TensorOverlap::NONE, OverlapReason::NONE};
constexpr OverlapAnswer COVERED{TensorOverlap::COVERED, OverlapReason::NONE};
constexpr OverlapAnswer SHARED{TensorOverlap::PARTIAL, OverlapReason::SHARED_BYTES};
constexpr OverlapAnswer partial(OverlapReason r) { return {TensorOverlap::PARTIAL, r}; }

const OverlapOptions BASE_MODEL{.exact_strides = false};

// x: 16x16 UINT8 over 256 B, strides (16, 1). x[r0:r1, c0:c1]:
Tensor block(const BufferDescriptor& b, uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1) {
    return view(b, {r1 - r0, c1 - c0}, {16, 1}, uint64_t{r0} * 16 + c0);
}

}  // namespace

TEST(Overlap, DisjointColumnBlocksAreNoneAlthoughTheirRangesInterleave) {
    const auto x = backing(256);
    EXPECT_EQ(overlap(block(x, 0, 16, 0, 4), block(x, 0, 16, 8, 12), BASE_MODEL), NONE);
    EXPECT_EQ(overlap(block(x, 0, 16, 8, 12), block(x, 0, 16, 0, 4)), NONE);
}

TEST(Overlap, TwoByTwoGridOfTilesIsPairwiseNone) {
    const auto x = backing(256);
    std::vector<Tensor> tiles;
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t c = 0; c < 2; ++c) tiles.push_back(block(x, r * 8, r * 8 + 8, c * 8, c * 8 + 8));
    for (size_t i = 0; i < tiles.size(); ++i)
        for (size_t j = 0; j < tiles.size(); ++j)
            if (i != j) {
                EXPECT_EQ(overlap(tiles[i], tiles[j], BASE_MODEL), NONE) << i << " vs " << j;
            }
}

TEST(Overlap, ShiftedTilesShareBytes) {
    const auto x = backing(256);
    EXPECT_EQ(overlap(block(x, 0, 8, 0, 8), block(x, 4, 12, 4, 12), BASE_MODEL), SHARED);
}

TEST(Overlap, RowBlockAndColumnBlockShareACorner) {
    const auto x = backing(256);
    EXPECT_EQ(overlap(block(x, 0, 4, 0, 16), block(x, 0, 16, 12, 16), BASE_MODEL), SHARED);
    EXPECT_EQ(overlap(block(x, 0, 16, 12, 16), block(x, 0, 4, 0, 16), BASE_MODEL), SHARED);
}

TEST(Overlap, TileCoversTheTileInsideItButNotTheReverse) {
    const auto x = backing(256);
    EXPECT_EQ(overlap(block(x, 0, 8, 0, 8), block(x, 2, 4, 2, 4), BASE_MODEL), COVERED);
    EXPECT_EQ(overlap(block(x, 2, 4, 2, 4), block(x, 0, 8, 0, 8), BASE_MODEL), SHARED);
}

TEST(Overlap, ColumnBlocksOverA250ByteBackingWrapInTheBaseModel) {
    // 250 is not a multiple of the 16-byte row: A[0] = 15 < 16 rows. The second
    // block runs past 250 bytes, so it is built without validation.
    const auto x = backing(250);
    const Tensor left = raw_view(x, {16, 4}, {16, 1}, 0);
    const Tensor right = raw_view(x, {16, 4}, {16, 1}, 8);
    EXPECT_EQ(overlap(left, right, BASE_MODEL), partial(OverlapReason::WRAPS_ROW));
    // The byte sets are disjoint whatever the backing size: the exact decision says so.
    EXPECT_EQ(overlap(left, right), NONE);
}

TEST(Overlap, ColumnBlocksOverA512ByteBackingAreNone) {
    const auto x = backing(512);
    EXPECT_EQ(overlap(view(x, {16, 4}, {16, 1}, 0), view(x, {16, 4}, {16, 1}, 8), BASE_MODEL), NONE);
}

TEST(Overlap, EvenRowsAndOddRowsAreNone) {
    const auto x = backing(256);
    EXPECT_EQ(overlap(view(x, {8, 16}, {32, 1}, 0), view(x, {8, 16}, {32, 1}, 16), BASE_MODEL), NONE);
}

TEST(Overlap, TransposedViewAgainstColumnBlockIsPartial) {
    const auto x = backing(256);
    const Tensor transposed = view(x, {16, 4}, {1, 16});  // x[0:4, :].T
    const Tensor columns = block(x, 0, 16, 8, 12);
    EXPECT_EQ(overlap(transposed, columns, BASE_MODEL), partial(OverlapReason::DIFFERENT_STRIDES));
    EXPECT_EQ(overlap(transposed, columns), SHARED);  // row 0, column 8 is in both
}

TEST(Overlap, OneDimensionalRanges) {
    const auto x = backing(256);
    const Tensor whole64 = view(x, {64}, {1}, 0), mid = view(x, {8}, {1}, 8), head = view(x, {8}, {1}, 0);
    EXPECT_EQ(overlap(whole64, mid, BASE_MODEL), COVERED);
    EXPECT_EQ(overlap(mid, whole64, BASE_MODEL), SHARED);
    EXPECT_EQ(overlap(head, mid, BASE_MODEL), NONE);
}

TEST(Overlap, WholeBackingProbeCoversAnyEntry) {
    const auto x = backing(256);
    const Tensor whole = view(x, {16, 16}, {16, 1});
    EXPECT_EQ(overlap(whole, view(x, {16, 4}, {1, 16}), BASE_MODEL), COVERED);
    EXPECT_EQ(overlap(whole, view(x, {4}, {2}, 64, DataType::FLOAT32), BASE_MODEL), COVERED);
}

TEST(Overlap, FallbackReasonsNameTheLimitOfTheBaseModel) {
    const auto x = backing(256);
    const Tensor rows = block(x, 0, 4, 0, 8);  // not dense, so stage 1 cannot cover
    EXPECT_EQ(overlap(rows, view(x, {4, 4}, {4, 1}, 0, DataType::FLOAT32), BASE_MODEL),
              partial(OverlapReason::DIFFERENT_DTYPE));
    EXPECT_EQ(overlap(rows, view(x, {32}, {1}, 0), BASE_MODEL), partial(OverlapReason::DIFFERENT_RANK));
    EXPECT_EQ(overlap(view(x, {4, 4}, {16, 2}), view(x, {4, 4}, {16, 2}, 2), BASE_MODEL),
              partial(OverlapReason::NOT_ROW_MAJOR));
    EXPECT_EQ(overlap(view(x, {2, 20}, {16, 1}), view(x, {2, 4}, {16, 1}, 20), BASE_MODEL),
              partial(OverlapReason::WRAPS_ROW));
}

TEST(OverlapStrided, TransposedBlockAgainstADisjointColumnBlockIsNone) {
    const auto x = backing(256);
    const Tensor transposed = view(x, {8, 4}, {1, 16});  // x[0:4, 0:8].T
    const Tensor right = block(x, 0, 4, 8, 16);         // ranges [0, 56) and [8, 64) interleave
    EXPECT_EQ(overlap(transposed, right, BASE_MODEL), partial(OverlapReason::DIFFERENT_STRIDES));
    EXPECT_EQ(overlap(transposed, right), NONE);
    EXPECT_EQ(overlap(right, transposed), NONE);
    EXPECT_EQ(overlap(transposed, block(x, 3, 4, 7, 9)), SHARED);
}

TEST(OverlapStrided, TransposedTileAgainstTilesOfTheMatrix) {
    // x[0:8, 8:16].T: shape 8x8, strides (1, 16), offset 8.
    const auto x = backing(256);
    const Tensor t = view(x, {8, 8}, {1, 16}, 8);
    EXPECT_EQ(overlap(t, block(x, 0, 8, 0, 8)), NONE);
    EXPECT_EQ(overlap(t, block(x, 8, 16, 8, 16)), NONE);
    EXPECT_EQ(overlap(t, block(x, 0, 8, 8, 16)), COVERED);  // the same bytes in another order
    EXPECT_EQ(overlap(block(x, 0, 8, 8, 16), t), COVERED);
    EXPECT_EQ(overlap(t, block(x, 2, 3, 9, 10)), COVERED);
    EXPECT_EQ(overlap(block(x, 2, 3, 9, 10), t), SHARED);
}

TEST(OverlapStrided, SteppedRowsAgainstContiguousRows) {
    const auto x = backing(256);
    const Tensor even = view(x, {8, 16}, {32, 1});  // x[::2, :]
    EXPECT_EQ(overlap(even, block(x, 1, 2, 0, 16)), NONE);
    EXPECT_EQ(overlap(even, view(x, {16}, {1}, 48)), NONE);  // row 3 as a 1-D view
    EXPECT_EQ(overlap(even, block(x, 2, 4, 0, 16)), SHARED);
    EXPECT_EQ(overlap(even, block(x, 2, 3, 4, 8)), COVERED);
    EXPECT_EQ(overlap(view(x, {128}, {2}), view(x, {128}, {2}, 1)), NONE);  // even vs odd bytes
}

TEST(OverlapStrided, DifferentDtypesOverTheSameBytesAreDecidedByByte) {
    const auto x = backing(256);
    const Tensor floats = view(x, {4, 4}, {4, 1}, 0, DataType::FLOAT32);  // bytes 0..64
    EXPECT_EQ(overlap(floats, block(x, 0, 4, 0, 16)), COVERED);
    EXPECT_EQ(overlap(floats, block(x, 4, 8, 0, 16)), NONE);
    const Tensor odd_floats = view(x, {8}, {2}, 4, DataType::FLOAT32);  // bytes 4..8, 12..16, ...
    EXPECT_EQ(overlap(odd_floats, view(x, {4}, {1}, 0)), NONE);
    EXPECT_EQ(overlap(odd_floats, view(x, {2}, {1}, 7)), SHARED);
}

TEST(OverlapStrided, EvenAndOddBytesAreSplitByTheLatticeWhateverTheShapes) {
    const auto x = backing(4096);
    const Tensor even = view(x, {2048}, {2});
    const Tensor odd_rows = view(x, {64, 32}, {64, 2}, 1);
    EXPECT_EQ(overlap(even, odd_rows), NONE);
    EXPECT_EQ(overlap(even, odd_rows, OverlapOptions{.work_cap = 1}), NONE);
}

TEST(OverlapStrided, PastTheWorkCapTheAnswerIsPartialWithReason) {
    // 64x64 UINT8: even rows' even columns against odd rows' even columns. Same
    // residues mod 2, so the walk decides it.
    const auto x = backing(4096);
    const Tensor a = view(x, {32, 32}, {128, 2});
    const Tensor b = view(x, {32, 32}, {128, 2}, 64);
    const Tensor c = view(x, {32, 32}, {2, 128}, 64);  // b transposed
    EXPECT_EQ(overlap(a, c), NONE);
    EXPECT_EQ(overlap(b, c), COVERED);  // one canonical byte set
    const Tensor c_head = view(x, {32, 31}, {2, 128}, 64);
    EXPECT_EQ(overlap(b, c_head), COVERED);
    // A shared byte is found early; checking all 992 runs for containment is past a cap of 64.
    EXPECT_EQ(overlap(b, c_head, OverlapOptions{.work_cap = 64}), SHARED);
    EXPECT_EQ(overlap(a, c, OverlapOptions{.work_cap = 4}), partial(OverlapReason::WORK_CAP));
}

TEST(OverlapStrided, InterleavedAxesOnBothSidesAreSweptWithinTheCap) {
    const auto x = backing(256);
    // Element strides (3, 5) over shape 4x4: the axes interleave, so neither view
    // is nested, and gcd 1 leaves the lattice test nothing to split.
    // a = {3i + 5j} = 0 3 5 6 8 9 10 11 13 14 15 16 18 19 21 24.
    const Tensor a = view(x, {4, 4}, {3, 5});
    const Tensor b = view(x, {3, 2}, {3, 5}, 17);  // 17 20 22 23 25 28
    const Tensor c = view(x, {3, 2}, {3, 5}, 16);  // 16 19 21 22 24 27
    EXPECT_EQ(overlap(a, b, BASE_MODEL), partial(OverlapReason::NOT_ROW_MAJOR));
    EXPECT_EQ(overlap(a, b), NONE);
    EXPECT_EQ(overlap(b, a), NONE);
    EXPECT_EQ(overlap(a, c), SHARED);
    EXPECT_EQ(overlap(a, b, OverlapOptions{.work_cap = 4}), partial(OverlapReason::WORK_CAP));
}

TEST(Overlap, DifferentBackingsNeverOverlap) {
    const auto x = backing(256, 1), y = backing(256, 2);
    EXPECT_EQ(overlap(view(x, {16}, {1}), view(y, {16}, {1})), NONE);
}
