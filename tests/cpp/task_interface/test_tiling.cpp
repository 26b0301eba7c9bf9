#include <gtest/gtest.h>

#include <stdexcept>
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
