// ViewIndex and TileIndex: no entry that may share a byte with a probe is ever
// missed, whatever the probe's layout (a tile of the index's pitch, a transposed
// view, a 1-D range, another row stride, a 3-D view, an offset off the row
// lattice), through inserts, erases, pitch changes and growth past the flat
// array; and a tile probe among tiles of its pitch visits only the tiles whose
// rows and columns meet its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <random>
#include <vector>

#include "simpler/view/view_box.h"
#include "simpler/view/view_index.h"

using namespace simpler;

namespace {

constexpr uint64_t BACKING = 8192;

struct View {
    uint64_t offset = 0;
    uint8_t dtype = 0;
    uint32_t ndims = 0;
    uint32_t shapes[3] = {};
    uint32_t strides[3] = {};  // elements
};

ViewBox box_of(const View& v) { return make_view_box(v.offset, BACKING, v.dtype, v.shapes, v.strides, v.ndims); }

using Bytes = std::bitset<2 * BACKING>;

// The bytes a view reaches, enumerated.
Bytes bytes_of(const View& v) {
    Bytes out;
    const uint32_t elem = data_type_element_size(v.dtype);
    uint32_t idx[3] = {};
    for (;;) {
        uint64_t at = v.offset;
        for (uint32_t i = 0; i < v.ndims; ++i) at += uint64_t{idx[i]} * v.strides[i] * elem;
        for (uint32_t k = 0; k < elem; ++k) out.set(at + k);
        uint32_t i = v.ndims;
        while (i > 0 && ++idx[i - 1] == v.shapes[i - 1]) idx[--i] = 0;
        if (i == 0) return out;
    }
}

View tile_view(uint64_t pitch, DataType dtype, uint64_t row, uint64_t col_byte, uint32_t rows, uint32_t cols) {
    View v;
    v.dtype = static_cast<uint8_t>(dtype);
    v.ndims = 2;
    v.shapes[0] = rows;
    v.shapes[1] = cols;
    v.strides[0] = static_cast<uint32_t>(pitch / element_size(dtype));
    v.strides[1] = 1;
    v.offset = row * pitch + col_byte;
    return v;
}

// A random view within BACKING bytes: tiles of pitch 64 or 96 (sometimes at a
// byte offset off the element lattice), transposed views, 1-D ranges, 3-D
// blocks, rows that wrap (stride below the row length), arbitrary strides.
View random_view(std::mt19937_64& rng) {
    static constexpr DataType dtypes[4] = {DataType::UINT8, DataType::FLOAT16, DataType::FLOAT32, DataType::INT64};
    const DataType dt = dtypes[rng() % 4];
    const uint32_t elem = element_size(dt);
    const auto pick = [&](uint64_t lo, uint64_t hi) { return static_cast<uint32_t>(lo + rng() % (hi - lo + 1)); };
    View v;
    v.dtype = static_cast<uint8_t>(dt);
    switch (rng() % 7) {
        case 0:
        case 1:
        case 2: {  // a tile of pitch 64 or 96
            const uint64_t pitch = rng() % 3 == 0 ? 96 : 64;
            const uint32_t cols = pick(1, pitch / elem);
            const uint64_t room = pitch - uint64_t{cols} * elem;
            const uint64_t col_byte = rng() % 4 == 0 ? rng() % (room + 1) : (rng() % (room / elem + 1)) * elem;
            const uint64_t row = rng() % 60;
            return tile_view(pitch, dt, row, col_byte, pick(1, 1 + rng() % 24), cols);
        }
        case 3: {  // transposed: shapes (a, b), strides (1, 64 / elem)
            v.ndims = 2;
            v.shapes[0] = pick(1, 64 / elem);
            v.shapes[1] = pick(1, 40);
            v.strides[0] = 1;
            v.strides[1] = 64 / elem;
            v.offset = (rng() % 40) * 64 + (rng() % (64 / elem - v.shapes[0] + 1)) * elem;
            return v;
        }
        case 4:  // 1-D
            v.ndims = 1;
            v.shapes[0] = pick(1, 1024 / elem);
            v.strides[0] = rng() % 4 == 0 ? pick(1, 5) : 1;
            v.offset = rng() % 2048;
            return v;
        case 5:  // 3-D block of a 64-byte-pitch matrix
            v.ndims = 3;
            v.shapes[0] = pick(1, 3);
            v.shapes[1] = pick(1, 8);
            v.shapes[2] = pick(1, 64 / elem);
            v.strides[2] = 1;
            v.strides[1] = 64 / elem;
            v.strides[0] = 8 * 64 / elem;
            v.offset = (rng() % 40) * 64 + (rng() % (64 / elem - v.shapes[2] + 1)) * elem;
            return v;
        default:  // 2-D with unit inner stride and any row stride (rows may wrap or overlap)
            v.ndims = 2;
            v.shapes[0] = pick(1, 20);
            v.shapes[1] = pick(1, 24);
            v.strides[0] = pick(1, 40);
            v.strides[1] = 1;
            v.offset = rng() % 2048;
            return v;
    }
}

struct Live {
    uint32_t id;
    View view;
    ViewBox box;
    Bytes bytes;
};

std::vector<uint32_t> candidates(const ViewIndex& index, const ViewBox& probe) {
    std::vector<uint32_t> got;
    index.for_each_candidate(probe, [&](const ViewIndex::Item& item) { got.push_back(item.id); });
    std::sort(got.begin(), got.end());
    return got;
}

}  // namespace

TEST(TileIndex, TileOfNamesRowsAndByteColumns) {
    // 4x3 FLOAT32 at row 2, column 5 of a 16-float (64-byte) pitch.
    const ViewBox b = box_of(tile_view(64, DataType::FLOAT32, 2, 20, 4, 3));
    EXPECT_EQ(tile_pitch(b), 64u);
    const auto t = tile_of(b, 64);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->row_begin, 2u);
    EXPECT_EQ(t->row_end, 6u);
    EXPECT_EQ(t->col_begin, 20u);
    EXPECT_EQ(t->col_end, 32u);
    EXPECT_FALSE(tile_of(b, 128).has_value());  // another pitch
    // A byte offset off the element lattice is still a tile in bytes.
    EXPECT_TRUE(tile_of(box_of(tile_view(64, DataType::FLOAT32, 1, 3, 2, 4)), 64).has_value());
    // A row that runs past its pitch wraps into the next: not a tile.
    EXPECT_FALSE(tile_of(box_of(tile_view(64, DataType::FLOAT32, 1, 52, 2, 4)), 64).has_value());
    View transposed = tile_view(64, DataType::FLOAT32, 0, 0, 4, 4);
    std::swap(transposed.strides[0], transposed.strides[1]);
    EXPECT_EQ(tile_pitch(box_of(transposed)), 0u);
    View three{0, static_cast<uint8_t>(DataType::UINT8), 3, {2, 2, 2}, {16, 4, 1}};
    EXPECT_EQ(tile_pitch(box_of(three)), 0u);
    View one{0, static_cast<uint8_t>(DataType::UINT8), 1, {16}, {1}};
    EXPECT_EQ(tile_pitch(box_of(one)), 0u);
}

TEST(ViewIndex, EmptyIndexYieldsNothingAndErasesNothing) {
    ViewIndex index;
    const ViewBox b = box_of(tile_view(64, DataType::UINT8, 0, 0, 8, 8));
    EXPECT_TRUE(candidates(index, b).empty());
    EXPECT_FALSE(index.erase(1, b));
    EXPECT_TRUE(index.empty());
    EXPECT_EQ(index.tiles().pitch(), 0u);
}

TEST(ViewIndex, TileProbeVisitsOnlyTilesWhoseRowsAndColumnsMeet) {
    // A 32 x 32 grid of 8x8 UINT8 tiles of a 256-byte-pitch matrix: past the flat array.
    ViewIndex index;
    uint32_t id = 0;
    for (uint64_t r = 0; r < 256; r += 8)
        for (uint64_t c = 0; c < 256; c += 8) index.insert(id++, box_of(tile_view(256, DataType::UINT8, r, c, 8, 8)));
    EXPECT_EQ(index.tiles().size(), 1024u);
    EXPECT_TRUE(index.ranges().empty());
    EXPECT_EQ(candidates(index, box_of(tile_view(256, DataType::UINT8, 40, 80, 8, 8))),
              (std::vector<uint32_t>{5 * 32 + 10}));
    // Off the tile grid: rows 44..52, bytes 84..92 meet four tiles.
    EXPECT_EQ(candidates(index, box_of(tile_view(256, DataType::UINT8, 44, 84, 8, 8))),
              (std::vector<uint32_t>{5 * 32 + 10, 5 * 32 + 11, 6 * 32 + 10, 6 * 32 + 11}));
    // A 1-D range over rows 8..16 by bytes: every tile of tile row 1.
    View band{8 * 256, static_cast<uint8_t>(DataType::UINT8), 1, {8 * 256}, {1}};
    const auto got = candidates(index, box_of(band));
    ASSERT_EQ(got.size(), 32u);
    EXPECT_EQ(got.front(), 32u);
    EXPECT_EQ(got.back(), 63u);
    for (uint32_t i = 0; i < id; ++i)
        EXPECT_TRUE(index.erase(i, box_of(tile_view(256, DataType::UINT8, (i / 32) * 8, (i % 32) * 8, 8, 8))));
    EXPECT_TRUE(index.empty());
    EXPECT_EQ(index.tiles().pitch(), 0u);
}

TEST(ViewIndex, EraseFindsAnEntryAfterThePitchChanged) {
    ViewIndex index;
    const ViewBox a = box_of(tile_view(64, DataType::UINT8, 0, 0, 4, 4));
    const ViewBox b = box_of(tile_view(128, DataType::UINT8, 0, 0, 4, 4));
    const ViewBox c = box_of(tile_view(128, DataType::UINT8, 8, 0, 4, 4));
    index.insert(1, a);  // the tiles take pitch 64
    index.insert(2, b);  // pitch 128: filed by byte range
    EXPECT_EQ(index.tiles().size(), 1u);
    EXPECT_TRUE(index.erase(1, a));
    index.insert(3, c);  // the tiles take pitch 128
    EXPECT_EQ(index.tiles().pitch(), 128u);
    EXPECT_EQ(candidates(index, b), (std::vector<uint32_t>{2}));
    EXPECT_TRUE(index.erase(2, b));
    EXPECT_FALSE(index.erase(2, b));
    EXPECT_TRUE(index.erase(3, c));
    EXPECT_TRUE(index.empty());
}

// Differential: against the enumerated byte sets, every live entry sharing a
// byte with the probe is a candidate; every candidate is live, reported once,
// and its byte range meets the probe's.
TEST(ViewIndex, NeverMissesAnEntryThatSharesAByte) {
    std::mt19937_64 rng(14);
    ViewIndex index;
    std::vector<Live> live;
    uint32_t next = 0;
    size_t queries = 0, grown = 0;
    for (int step = 0; step < 30000; ++step) {
        uint64_t op = rng() % 100;
        if (op < 45 && live.size() >= 400) op = 50;  // hold the live set near 400
        if (op < 45 || live.empty()) {
            const View v = random_view(rng);
            Live l{next++, v, box_of(v), bytes_of(v)};
            index.insert(l.id, l.box);
            live.push_back(l);
        } else if (op < 70) {
            const size_t k = rng() % live.size();
            ASSERT_TRUE(index.erase(live[k].id, live[k].box));
            if (rng() % 8 == 0) {
                ASSERT_FALSE(index.erase(live[k].id, live[k].box));
            }
            live[k] = live.back();
            live.pop_back();
        } else if (op < 71 &&
                   rng() % 16 == 0) {  // drain the tiles of the current pitch, so that another pitch takes over
            const uint64_t pitch = index.tiles().pitch();
            for (size_t k = live.size(); k-- > 0;) {
                if (pitch == 0 || !tile_of(live[k].box, pitch)) continue;
                ASSERT_TRUE(index.erase(live[k].id, live[k].box));
                live[k] = live.back();
                live.pop_back();
            }
            ASSERT_TRUE(index.tiles().empty());
        } else {
            const View p = random_view(rng);
            const ViewBox pb = box_of(p);
            const Bytes pbytes = bytes_of(p);
            const std::vector<uint32_t> got = candidates(index, pb);
            ASSERT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end()) << "a candidate reported twice";
            for (const Live& l : live) {
                const bool found = std::binary_search(got.begin(), got.end(), l.id);
                if ((l.bytes & pbytes).any()) {
                    ASSERT_TRUE(found) << "entry " << l.id << " shares a byte, not found";
                }
                if (found) {
                    ASSERT_TRUE(l.box.begin < pb.end && pb.begin < l.box.end);
                }
            }
            for (uint32_t id : got)
                ASSERT_TRUE(std::any_of(live.begin(), live.end(), [&](const Live& l) { return l.id == id; }));
            ++queries;
            grown += index.tiles().size() > TileIndex::SMALL_LIMIT;
        }
        ASSERT_EQ(index.size(), live.size());
    }
    EXPECT_GT(queries, 5000u);
    EXPECT_GT(grown, 1000u);  // the grid ran, not only the flat array
}
