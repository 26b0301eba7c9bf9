// The chip runtime's working tensor and task payload layouts, pinned from
// outside, and the adoption of a ChipTensor into the working tensor.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "chip_fixtures.h"
#include "simpler/chip/entry_args.h"
#include "simpler/chip/task_payload.h"
#include "simpler/chip/tensor.h"
#include "simpler/chip/tile.h"

using namespace simpler;
using namespace simpler::chip;

using simpler::chip::TaskPayload;

TEST(RuntimeTensorLayout, IsTwoCacheLinesWithPinnedOffsets) {
    EXPECT_EQ(sizeof(simpler::chip::Tensor), 128u);
    EXPECT_EQ(alignof(simpler::chip::Tensor), 64u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, addr), 0u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, start_offset), 16u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, shapes), 24u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, strides), 44u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, ndims), 64u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, producer_task), 72u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, extent_elem_cache), 80u);
    EXPECT_EQ(offsetof(simpler::chip::Tensor, overlap_version), 88u);
    EXPECT_GE(sizeof(simpler::chip::Tensor) - offsetof(simpler::chip::Tensor, _reserved), 32u);
}

TEST(RuntimeTensorLayout, KernelHeaderSpellsItTensor) { EXPECT_TRUE((std::is_same_v<Tensor, simpler::chip::Tensor>)); }

TEST(TaskPayloadLayout, IsExactly4864BytesWithTensorsAtStride128) {
    EXPECT_EQ(sizeof(TaskPayload), TASK_PAYLOAD_SIZE);
    EXPECT_EQ(sizeof(TaskPayload), 4864u);
    EXPECT_EQ(offsetof(TaskPayload, tensors), 640u);
    EXPECT_EQ(offsetof(TaskPayload, tensors[1]) - offsetof(TaskPayload, tensors[0]), TASKPAYLOAD_TENSOR_STRIDE);
    EXPECT_EQ(offsetof(TaskPayload, scalars), 640u + 32u * 128u);
    EXPECT_EQ(sizeof(TaskPayload::scalars) / sizeof(uint64_t), static_cast<size_t>(CORE_MAX_SCALAR_ARGS));
    EXPECT_EQ(sizeof(TaskPayload::tensors) / sizeof(Tensor), static_cast<size_t>(CORE_MAX_TENSOR_ARGS));
}

TEST(EntryArgsLayout, HoldsTheChipCapsOfWorkingTensors) {
    EXPECT_EQ(simpler::chip::EntryArgs::MAX_TENSORS, CHIP_MAX_TENSOR_ARGS);
    EXPECT_EQ(simpler::chip::EntryArgs::MAX_SCALARS, CHIP_MAX_SCALAR_ARGS);
}

TEST(AdoptChipTensor, CopiesGeometryAndComputesTheCaches) {
    float buf[64] = {};
    const ChipTensor c = chip_test::view(buf, sizeof buf, 3, {4, 5}, {12, 2});
    Tensor t{};
    ASSERT_TRUE(simpler::chip::adopt_chip_tensor(c, t).ok());
    EXPECT_EQ(t.addr, c.buffer.addr);
    EXPECT_EQ(t.size, sizeof buf);
    EXPECT_EQ(t.start_offset, 3u);
    EXPECT_EQ(t.ndims, 2u);
    EXPECT_EQ(t.producer_task, simpler::chip::NO_PRODUCER);
    EXPECT_EQ(t.overlap_version, 0);
    EXPECT_EQ(t.extent_elem_cache, 1u + 3u * 12u + 4u * 2u);
    EXPECT_EQ(t.is_contiguous, 0u);
    const ChipTensor back = simpler::chip::chip_tensor_of(t);
    EXPECT_EQ(std::memcmp(&back, &c, sizeof c), 0);
}

TEST(AdoptChipTensor, RefusesAnInvalidTensorAndLeavesTheTargetAlone) {
    float buf[4] = {};
    const ChipTensor c = chip_test::view(buf, sizeof buf, 0, {8}, {1});  // 32 B view in a 16 B backing
    Tensor t{};
    t.start_offset = 77;
    const ValidationError e = simpler::chip::adopt_chip_tensor(c, t);
    EXPECT_FALSE(e.ok());
    EXPECT_NE(e.message().find("ChipTensor"), std::string::npos);
    EXPECT_EQ(t.start_offset, 77u);
}

TEST(AdoptChipTensor, MarksRowMajorDenseViewsContiguous) {
    float buf[24] = {};
    EXPECT_EQ(chip_test::adopt(chip_test::view(buf, sizeof buf, 0, {2, 3, 4}, {12, 4, 1})).is_contiguous, 1u);
    EXPECT_EQ(chip_test::adopt(chip_test::view(buf, sizeof buf, 0, {3, 2}, {1, 3})).is_contiguous, 0u);
}

TEST(MakeTile, MovesTheOriginAndKeepsBackingAndStrides) {
    float buf[8 * 8] = {};
    const Tensor m = chip_test::adopt(chip_test::view(buf, sizeof buf, 0, {8, 8}, {8, 1}));
    const uint32_t off[2] = {2, 4};
    const uint32_t shp[2] = {3, 4};
    Tensor t{};
    ASSERT_TRUE(simpler::chip::make_tile(m, off, shp, t));
    EXPECT_EQ(t.addr, m.addr);
    EXPECT_EQ(t.start_offset, 2u * 8u + 4u);
    EXPECT_EQ(t.shapes[0], 3u);
    EXPECT_EQ(t.strides[0], 8u);
    EXPECT_EQ(t.is_contiguous, 0u);
    const uint32_t too_far[2] = {6, 0};
    EXPECT_FALSE(simpler::chip::make_tile(m, too_far, shp, t));
}

TEST(MakeTransposed, SwapsShapesAndStrides) {
    float buf[6] = {};
    const Tensor m = chip_test::adopt(chip_test::view(buf, sizeof buf, 0, {2, 3}, {3, 1}));
    Tensor t{};
    ASSERT_TRUE(simpler::chip::make_transposed(m, 0, 1, t));
    EXPECT_EQ(t.shapes[0], 3u);
    EXPECT_EQ(t.strides[0], 1u);
    EXPECT_EQ(t.shapes[1], 2u);
    EXPECT_EQ(t.strides[1], 3u);
}
