#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.h"
#include "simpler/task_interface/tiling.h"

using namespace simpler;

namespace {

Tensor matrix(uint32_t rows, uint32_t cols) {
    const uint32_t shapes[] = {rows, cols};
    return make_tensor(shm_descriptor(uint64_t{rows} * cols * 4), shapes, DataType::FLOAT32);
}

}  // namespace

TEST(Tiling, TasksTakeTileKOfEachTiledOperandRowMajorWithRaggedEdgesAndBroadcastOperands) {
    const Tensor a = matrix(10, 6);
    const Tensor whole = vector_tensor(16);
    const TileOperand ops[] = {{a, TensorArgType::INPUT, {4, 4}}, {whole, TensorArgType::INOUT, {}}};
    const std::vector<TaskArgs> tasks = tile_task_args(ops);
    ASSERT_EQ(tasks.size(), 6u);
    const uint32_t rows[] = {4, 4, 4, 4, 2, 2}, cols[] = {4, 2, 4, 2, 4, 2};
    const uint64_t offsets[] = {0, 16, 96, 112, 192, 208};  // bytes: 4 * (row * 6 + col)
    for (size_t k = 0; k < tasks.size(); ++k) {
        const Tensor& t = tasks[k].tensor(0);
        EXPECT_EQ(t.shapes[0], rows[k]) << k;
        EXPECT_EQ(t.shapes[1], cols[k]) << k;
        EXPECT_EQ(t.strides[0], 6u);
        EXPECT_EQ(t.byte_offset, offsets[k]) << k;
        EXPECT_EQ(tasks[k].tensor(1), whole);
        EXPECT_EQ(tasks[k].tag(1), TensorArgType::INOUT);
    }
}

TEST(Tiling, RefusesMismatchedGridsMalformedTilesAndNoTiledOperand) {
    const Tensor a = matrix(8, 8);
    const TileOperand grids[] = {{a, TensorArgType::INPUT, {4, 4}}, {a, TensorArgType::INPUT, {8, 4}}};
    EXPECT_THROW((void)tile_task_args(grids), std::invalid_argument);
    const TileOperand zero[] = {{a, TensorArgType::INPUT, {0, 4}}};
    EXPECT_THROW((void)tile_task_args(zero), std::invalid_argument);
    const TileOperand rank[] = {{a, TensorArgType::INPUT, {4}}};
    EXPECT_THROW((void)tile_task_args(rank), std::invalid_argument);
    const TileOperand none[] = {{a, TensorArgType::INPUT, {}}};
    EXPECT_THROW((void)tile_task_args(none), std::invalid_argument);
    EXPECT_THROW((void)tile_task_args({}), std::invalid_argument);
}

TEST(Tiling, FillBuildsTaskKOnDemandWithStridesAndKeepsTheScratchCapacity) {
    // A 3-D operand with padded strides (a view into a larger array), tiled 2 x 3 x 4.
    const uint32_t shapes[] = {5, 7, 9}, strides[] = {7 * 16, 16, 1};
    const Tensor a = make_tensor(shm_descriptor(4 * 5 * 7 * 16 + 64), shapes, DataType::FLOAT32, strides, 64);
    const Tiling tiling({{a, TensorArgType::INOUT, {2, 3, 4}}, {vector_tensor(8), TensorArgType::INPUT, {}}});
    ASSERT_EQ(tiling.size(), 3u * 3u * 3u);
    TaskArgs scratch;
    scratch.add_scalar(99);  // filled over: cleared first
    size_t k = 0;
    for (uint32_t i = 0; i < 3; ++i)
        for (uint32_t j = 0; j < 3; ++j)
            for (uint32_t l = 0; l < 3; ++l, ++k) {
                tiling.fill(k, scratch);
                ASSERT_EQ(scratch.tensor_count(), 2u);
                EXPECT_EQ(scratch.scalar_count(), 0u);
                const Tensor& t = scratch.tensor(0);
                EXPECT_EQ(t.shapes[0], std::min(2u, 5 - 2 * i)) << k;
                EXPECT_EQ(t.shapes[1], std::min(3u, 7 - 3 * j)) << k;
                EXPECT_EQ(t.shapes[2], std::min(4u, 9 - 4 * l)) << k;
                EXPECT_EQ(t.byte_offset, 64 + 4 * (uint64_t{2 * i} * strides[0] + 3 * j * strides[1] + 4 * l)) << k;
                EXPECT_EQ(t.strides[0], strides[0]);
                EXPECT_TRUE(validate_tensor(t).ok()) << k;  // proven, and so it is
                EXPECT_EQ(scratch.tag(0), TensorArgType::INOUT);
                EXPECT_EQ(scratch.tensor(1), vector_tensor(8));
            }
    const std::vector<TaskArgs> whole = tile_task_args(
        std::vector<TileOperand>{{a, TensorArgType::INOUT, {2, 3, 4}}, {vector_tensor(8), TensorArgType::INPUT, {}}});
    ASSERT_EQ(whole.size(), tiling.size());
    tiling.fill(13, scratch);
    EXPECT_EQ(whole[13].tensor(0), scratch.tensor(0));
}

TEST(Tiling, RefusesAnOperandWhoseWholeViewTaskArgsRefusesNamingTheOperand) {
    const Tensor ok = vector_tensor(16);
    const Tensor read_only = vector_tensor(16, DataType::FLOAT32, 1024, AccessMode::READ);
    try {
        (void)Tiling({{ok, TensorArgType::INPUT, {4}}, {read_only, TensorArgType::OUTPUT_EXISTING, {4}}});
        FAIL() << "a write through a read-only grant was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("tiles: operand 1: TaskArgs argument 0"), std::string::npos) << e.what();
    }
    Tensor past_end = vector_tensor(16);
    past_end.byte_offset = 1024 - 8;  // 16 floats from here run past the 1 KiB buffer
    EXPECT_THROW((void)Tiling({{past_end, TensorArgType::INPUT, {4}}}), std::invalid_argument);
}

TEST(Tiling, RefusesAGridWithMoreTilesThanACountHolds) {
    // Three axes of 2^31 elements, each of stride 1: a valid view of ~24 GiB that overlaps
    // itself, whose 1 x 1 x 1 tiles number 2^93.
    const uint32_t shapes[] = {1u << 31, 1u << 31, 1u << 31}, strides[] = {1, 1, 1};
    const Tensor t = make_tensor(shm_descriptor(uint64_t{1} << 35), shapes, DataType::FLOAT32, strides);
    ASSERT_TRUE(validate_tensor(t).ok());
    try {
        (void)Tiling({{t, TensorArgType::INPUT, {1, 1, 1}}});
        FAIL() << "a grid of 2^93 tiles was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("more tiles than fit in 64 bits"), std::string::npos) << e.what();
    }
}

TEST(TaskArgsBatch, HoldsATilingsTasksThenTheAppendedOnes) {
    TaskArgsBatch batch;
    batch.tiling.emplace(std::vector<TileOperand>{{vector_tensor(16), TensorArgType::INPUT, {4}}});
    TaskArgs extra;
    extra.add_tensor(vector_tensor(8), TensorArgType::INOUT);
    batch.items.push_back(extra);
    ASSERT_EQ(batch.size(), 5u);
    TaskArgs scratch;
    EXPECT_EQ(&batch.at(2, scratch), &scratch);
    EXPECT_EQ(scratch.tensor(0).byte_offset, 2u * 4 * 4);
    EXPECT_EQ(&batch.at(4, scratch), &batch.items[0]);
    EXPECT_THROW((void)batch.at(5, scratch), std::out_of_range);
}
