// view_runs.h: pack_view / unpack_view agree with a reference that walks every
// element of the view index by index (random ranks, shapes, strides, offsets
// and dtypes, self-overlapping views and shape-1 dimensions with odd strides
// included); the runs of a column block and of a contiguous view;
// view_payload_bytes; and view_is_one_run against the runs themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "simpler/remote/view_runs.h"

using namespace simpler;

namespace {

CanonicalIdentity identity() {
    CanonicalIdentity id{};
    id.owner_instance_id[0] = 1;
    id.buffer_id = 1;
    id.generation = 1;
    return id;
}

Tensor view_of(uint64_t nbytes, std::span<const uint32_t> shapes, DataType dtype, std::span<const uint32_t> strides,
               uint64_t byte_offset) {
    const BufferDescriptor d = make_buffer_descriptor(identity(), BackendKind::REMOTE_SIDECAR, AddressSpace::HOST,
                                                      AccessMode::READWRITE, nbytes, {});
    return make_tensor(d, shapes, dtype, strides, byte_offset);
}

// The byte offset of every element, in row-major index order.
std::vector<uint64_t> element_offsets(const Tensor& t) {
    std::vector<uint64_t> out;
    const uint64_t elem = data_type_element_size(t.dtype);
    std::array<uint32_t, MAX_TENSOR_DIMS> index{};
    for (;;) {
        uint64_t element = 0;
        for (uint32_t d = 0; d < t.ndims; ++d) element += uint64_t{index[d]} * t.strides[d];
        out.push_back(t.byte_offset + element * elem);
        uint32_t d = t.ndims;
        for (;;) {
            if (d == 0) return out;
            --d;
            if (++index[d] < t.shapes[d]) break;
            index[d] = 0;
        }
    }
}

std::vector<std::pair<uint64_t, uint64_t>> runs_of(const Tensor& t) {
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    for_each_run(t, [&](uint64_t offset, uint64_t length) { runs.emplace_back(offset, length); });
    return runs;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 8));
    return v;
}

constexpr std::array<DataType, 6> kTypes{DataType::INT8,  DataType::FLOAT16, DataType::FLOAT32,
                                         DataType::INT64, DataType::FP4E2M1, DataType::FLOAT64};

TEST(ViewRuns, PackAndUnpackMatchAnElementByElementWalk) {
    std::mt19937_64 rng(20261201);
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    int overlapping = 0, shape_one_odd = 0, multi_run = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        const uint32_t ndims = pick(1, MAX_TENSOR_DIMS);
        const DataType dtype = kTypes[pick(0, kTypes.size() - 1)];
        const uint64_t elem = element_size(dtype);
        std::array<uint32_t, MAX_TENSOR_DIMS> shapes{}, strides{};
        // Half the views are row-major (possibly inside a wider row), half have random strides.
        const bool row_major = pick(0, 1) == 0;
        uint32_t next = 1;
        for (uint32_t d = ndims; d > 0; --d) {
            shapes[d - 1] = pick(1, 4);
            if (shapes[d - 1] == 1 && pick(0, 1) == 0) {
                strides[d - 1] = pick(1, 1000) | 1u;  // a shape-1 dimension's stride is never walked
            } else if (row_major) {
                strides[d - 1] = next;
            } else {
                strides[d - 1] = pick(1, 7);
            }
            next = strides[d - 1] * shapes[d - 1] + (pick(0, 3) == 0 ? pick(1, 3) : 0);
        }
        const uint64_t byte_offset = pick(0, 9) * elem;
        // The smallest backing that holds the view, plus some slack.
        uint64_t last = 0;
        for (uint32_t d = 0; d < ndims; ++d) last += uint64_t{shapes[d] - 1} * strides[d];
        const uint64_t nbytes = byte_offset + (last + 1) * elem + pick(0, 16);
        const Tensor t = view_of(nbytes, {shapes.data(), ndims}, dtype, {strides.data(), ndims}, byte_offset);

        const std::vector<uint64_t> offsets = element_offsets(t);
        ASSERT_EQ(view_payload_bytes(t), offsets.size() * elem);
        std::vector<uint64_t> sorted = offsets;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) ++overlapping;
        for (uint32_t d = 0; d < ndims; ++d)
            if (shapes[d] == 1 && strides[d] % 2 == 1 && strides[d] > 1) ++shape_one_odd;

        // pack
        const std::vector<uint8_t> backing = pattern(nbytes, static_cast<uint8_t>(trial));
        std::vector<uint8_t> expected;
        for (uint64_t o : offsets) expected.insert(expected.end(), backing.begin() + o, backing.begin() + o + elem);
        std::vector<uint8_t> packed(view_payload_bytes(t) + 1, 0xEE);
        pack_view(backing.data(), t, packed.data());
        EXPECT_EQ(packed.back(), 0xEE) << "pack_view wrote past the payload, trial " << trial;
        packed.pop_back();
        ASSERT_EQ(packed, expected) << "trial " << trial;

        // unpack: every element's bytes land at its offset, the last copy of an overlapping one wins.
        const std::vector<uint8_t> payload = pattern(view_payload_bytes(t), static_cast<uint8_t>(trial * 7 + 3));
        std::vector<uint8_t> want = backing;
        for (size_t i = 0; i < offsets.size(); ++i)
            std::memcpy(want.data() + offsets[i], payload.data() + i * elem, elem);
        std::vector<uint8_t> got = backing;
        unpack_view(got.data(), t, payload.data());
        ASSERT_EQ(got, want) << "trial " << trial;

        // The runs cover exactly the elements, in order, and lie inside the backing.
        const auto runs = runs_of(t);
        std::vector<uint64_t> covered;
        for (const auto& [offset, length] : runs) {
            ASSERT_EQ(length % elem, 0u);
            ASSERT_LE(offset + length, nbytes);
            for (uint64_t b = 0; b < length; b += elem) covered.push_back(offset + b);
        }
        ASSERT_EQ(covered, offsets) << "trial " << trial;
        if (runs.size() > 1) ++multi_run;
        EXPECT_EQ(view_is_one_run(t), runs.size() == 1) << "trial " << trial;
    }
    // The random views did reach the cases this test is about.
    EXPECT_GT(overlapping, 100);
    EXPECT_GT(shape_one_odd, 100);
    EXPECT_GT(multi_run, 100);
}

TEST(ViewRuns, AColumnBlockOfARowMajorMatrixIsOneRunPerRow) {
    constexpr uint32_t R = 10, C = 12, r0 = 2, c0 = 3, h = 5, w = 4;
    for (DataType dtype : kTypes) {
        const uint64_t elem = element_size(dtype);
        const std::array<uint32_t, 2> shape{h, w}, strides{C, 1};
        const Tensor t = view_of(uint64_t{R} * C * elem, shape, dtype, strides, (uint64_t{r0} * C + c0) * elem);
        const auto runs = runs_of(t);
        ASSERT_EQ(runs.size(), h);
        for (uint32_t i = 0; i < h; ++i) {
            EXPECT_EQ(runs[i].first, ((r0 + i) * uint64_t{C} + c0) * elem);
            EXPECT_EQ(runs[i].second, w * elem);
        }
        EXPECT_FALSE(view_is_one_run(t));
        EXPECT_EQ(view_payload_bytes(t), uint64_t{h} * w * elem);
    }
}

TEST(ViewRuns, AContiguousViewIsOneRun) {
    // Whole rows of a matrix, and a rank-4 row-major block with shape-1 dimensions.
    const std::array<uint32_t, 2> rows{3, 12}, row_strides{12, 1};
    const Tensor t = view_of(10 * 12 * 4, rows, DataType::FLOAT32, row_strides, 2 * 12 * 4);
    ASSERT_EQ(runs_of(t), (std::vector<std::pair<uint64_t, uint64_t>>{{2 * 12 * 4, 3 * 12 * 4}}));
    EXPECT_TRUE(view_is_one_run(t));

    const std::array<uint32_t, 4> shape{2, 1, 3, 5}, strides{15, 999, 5, 1};
    const Tensor u = view_of(30 * 2, shape, DataType::FLOAT16, strides, 0);
    ASSERT_EQ(runs_of(u), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 30 * 2}}));
    EXPECT_TRUE(view_is_one_run(u));
    EXPECT_EQ(view_payload_bytes(u), 60u);

    const std::array<uint32_t, 1> one{1}, stride{7};
    const Tensor single = view_of(64, one, DataType::INT64, stride, 16);
    ASSERT_EQ(runs_of(single), (std::vector<std::pair<uint64_t, uint64_t>>{{16, 8}}));
    EXPECT_TRUE(view_is_one_run(single));
}

TEST(ViewRuns, ATransposedViewIsOneRunPerElement) {
    const std::array<uint32_t, 2> shape{3, 2}, strides{1, 3};
    const Tensor t = view_of(6 * 4, shape, DataType::INT32, strides, 0);
    EXPECT_EQ(runs_of(t),
              (std::vector<std::pair<uint64_t, uint64_t>>{{0, 4}, {12, 4}, {4, 4}, {16, 4}, {8, 4}, {20, 4}}));
    EXPECT_FALSE(view_is_one_run(t));
}

TEST(ViewRuns, PayloadBytesSaturates) {
    // A view whose element count overflows 64 bits (never valid, but the function is total).
    Tensor t{};
    t.ndims = MAX_TENSOR_DIMS;
    for (uint32_t d = 0; d < MAX_TENSOR_DIMS; ++d) t.shapes[d] = 0xffffffffu;
    t.dtype = static_cast<uint8_t>(DataType::INT64);
    EXPECT_EQ(view_payload_bytes(t), UINT64_MAX);
}

}  // namespace
