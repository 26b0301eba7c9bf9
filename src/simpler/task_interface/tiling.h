// Tiled task arguments: the TaskArgs of N tasks that each take one tile of
// every tiled operand, described once in C++ (a Python loop building
// thousands of TaskArgs costs more than submitting them) and built on demand.
//
// Each tiled operand is cut into tiles of `tile` elements per dimension (the
// last tile of a dimension is what remains: ragged edges are allowed); its
// grid is ceil(shape / tile) per dimension. Every tiled operand must have the
// same grid. Task k (row-major over the grid, last dimension fastest) gets, in
// operand order, tile k of each tiled operand and the whole tensor of each
// operand whose tile is empty (broadcast: the same view in every task). A tile
// keeps its tensor's strides and dtype; its byte_offset is the tensor's plus
// the tile's first element.
//
// Checks: every operand's whole view goes through TaskArgs::add_tensor once,
// when the Tiling is built (its validation and the tag's access check). A tile
// then needs no check of its own: it has the operand's descriptor, dtype,
// strides, rank and tag; its shapes are at least 1 and at most the operand's;
// its offset adds whole elements to an aligned one; and its elements are a
// subset of the operand's (per dimension, first + extent <= the operand's
// shape), so its bytes lie within the operand's, which lie within the buffer.
// So the tiles are added as proven (TaskArgs::add_proven_tensor), and a batch
// of N tasks costs no N validations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

class Tiling {
public:
    // std::invalid_argument naming the operand when there is none, no operand
    // is tiled, a tile is malformed, the grids differ, or an operand's view is
    // refused (TaskArgs::add_tensor); and when the grid has more tiles than a
    // size_t counts (views that overlap themselves can have that many).
    explicit Tiling(std::vector<TileOperand> operands);

    // Tasks: the product of the grid.
    [[nodiscard]] size_t size() const noexcept { return count_; }
    // Task k's arguments into `out` (cleared first, its capacity kept); k < size().
    void fill(size_t k, TaskArgs& out) const;

private:
    std::vector<TileOperand> operands_;
    std::vector<uint32_t> grid_;
    size_t count_ = 0;
};

// The TaskArgs of every task, in grid order; throws what Tiling's constructor does.
std::vector<TaskArgs> tile_task_args(std::span<const TileOperand> operands);

// The argument lists of a batch of one-member tasks (Python's TaskArgsBatch):
// a tiling's tasks, built on demand, then the TaskArgs appended one by one.
struct TaskArgsBatch {
    std::optional<Tiling> tiling;
    std::vector<TaskArgs> items;

    [[nodiscard]] size_t size() const noexcept { return (tiling ? tiling->size() : 0) + items.size(); }
    // Task i's arguments (i < size()): an appended item itself, or a tiling's
    // task built into `scratch`.
    [[nodiscard]] const TaskArgs& at(size_t i, TaskArgs& scratch) const;
};

}  // namespace simpler
