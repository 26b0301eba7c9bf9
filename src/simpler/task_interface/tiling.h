// Tiled task arguments: the TaskArgs of N tasks that each take one tile of
// every tiled operand, built in C++ (a Python loop building thousands of
// TaskArgs costs more than submitting them).
//
// Each tiled operand is cut into tiles of `tile` elements per dimension (the
// last tile of a dimension is what remains: ragged edges are allowed); its
// grid is ceil(shape / tile) per dimension. Every tiled operand must have the
// same grid. Task k (row-major over the grid, last dimension fastest) gets, in
// operand order, tile k of each tiled operand and the whole tensor of each
// operand whose tile is empty (broadcast: the same view in every task). A tile
// keeps its tensor's strides and dtype; its byte_offset is the tensor's plus
// the tile's first element. Every view goes through TaskArgs::add_tensor (its
// validation and the tag's access check).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

struct TileOperand {
    Tensor tensor;
    TensorArgType tag = TensorArgType::INPUT;
    std::vector<uint32_t> tile;  // one extent per dimension of tensor; empty: the whole tensor in every task
};

// The grid of a tiled operand (ceil(shape / tile) per dimension);
// std::invalid_argument naming operand `index` when the tile has the wrong
// number of dimensions or a zero extent.
std::vector<uint32_t> tile_grid(const TileOperand& op, size_t index);

// The TaskArgs of every task, in grid order. std::invalid_argument naming the
// operand when there is none, no operand is tiled, a tile is malformed, the
// grids differ, or a view is refused.
std::vector<TaskArgs> tile_task_args(std::span<const TileOperand> operands);

// The argument lists of a batch of one-member tasks (Python's TaskArgsBatch):
// built by tile_task_args or appended one by one, submitted by submit_many.
struct TaskArgsBatch {
    std::vector<TaskArgs> items;
};

}  // namespace simpler
