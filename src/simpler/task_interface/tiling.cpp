#include "simpler/task_interface/tiling.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/task_interface/data_type.h"

namespace simpler {

namespace {

std::string dims_text(std::span<const uint32_t> d) {
    std::string s = "(";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + (d.size() == 1 ? ",)" : ")");
}

}  // namespace

std::vector<uint32_t> tile_grid(const TileOperand& op, size_t index) {
    const std::string who = "tiles: operand " + std::to_string(index);
    if (op.tile.size() != op.tensor.ndims)
        throw std::invalid_argument(who + ": tile " + dims_text(op.tile) + " has " + std::to_string(op.tile.size()) +
                                    " dimension(s), the tensor " + std::to_string(op.tensor.ndims));
    std::vector<uint32_t> grid(op.tile.size());
    for (size_t d = 0; d < op.tile.size(); ++d) {
        if (op.tile[d] == 0) throw std::invalid_argument(who + ": tile " + dims_text(op.tile) + " has a zero extent");
        grid[d] = (op.tensor.shapes[d] + op.tile[d] - 1) / op.tile[d];
    }
    return grid;
}

Tiling::Tiling(std::vector<TileOperand> operands) : operands_(std::move(operands)) {
    if (operands_.empty()) throw std::invalid_argument("tiles: no operands");
    std::optional<std::vector<uint32_t>> grid;
    size_t first = 0;
    for (size_t i = 0; i < operands_.size(); ++i) {
        if (operands_[i].tile.empty()) continue;
        std::vector<uint32_t> g = tile_grid(operands_[i], i);
        if (!grid) {
            grid = std::move(g);
            first = i;
        } else if (g != *grid) {
            throw std::invalid_argument("tiles: operand " + std::to_string(i) + "'s grid " + dims_text(g) +
                                        " differs from operand " + std::to_string(first) + "'s " + dims_text(*grid));
        }
    }
    if (!grid) throw std::invalid_argument("tiles: no operand is tiled (every tile is empty)");
    grid_ = std::move(*grid);
    count_ = 1;
    for (uint32_t g : grid_)
        if (__builtin_mul_overflow(count_, size_t{g}, &count_))
            throw std::invalid_argument("tiles: the grid " + dims_text(grid_) + " has more tiles than fit in 64 bits");
    // Each operand's whole view, once: what every one of its tiles is proven by (tiling.h).
    TaskArgs probe;
    for (size_t i = 0; i < operands_.size(); ++i) {
        probe.clear();
        try {
            probe.add_tensor(operands_[i].tensor, operands_[i].tag);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("tiles: operand " + std::to_string(i) + ": " + e.what());
        }
    }
}

void Tiling::fill(size_t k, TaskArgs& out) const {
    out.clear();
    uint32_t at[MAX_TENSOR_DIMS] = {};  // task k's grid index, last dimension fastest
    for (size_t d = grid_.size(); d-- > 0;) {
        at[d] = static_cast<uint32_t>(k % grid_[d]);
        k /= grid_[d];
    }
    for (const TileOperand& op : operands_) {
        if (op.tile.empty()) {
            out.add_proven_tensor(op.tensor, op.tag);
            continue;
        }
        Tensor t = op.tensor;
        uint64_t first_element = 0;
        for (size_t d = 0; d < grid_.size(); ++d) {
            const uint32_t begin = at[d] * op.tile[d];
            t.shapes[d] = std::min(op.tile[d], op.tensor.shapes[d] - begin);
            first_element += uint64_t{begin} * op.tensor.strides[d];
        }
        t.byte_offset += first_element * data_type_element_size(op.tensor.dtype);
        out.add_proven_tensor(t, op.tag);
    }
}

std::vector<TaskArgs> tile_task_args(std::span<const TileOperand> operands) {
    const Tiling tiling({operands.begin(), operands.end()});
    std::vector<TaskArgs> out(tiling.size());
    for (size_t k = 0; k < out.size(); ++k) {
        out[k].reserve(operands.size());  // one allocation per list, not one per doubling
        tiling.fill(k, out[k]);
    }
    return out;
}

const TaskArgs& TaskArgsBatch::at(size_t i, TaskArgs& scratch) const {
    const size_t tiled = tiling ? tiling->size() : 0;
    if (i >= tiled) return items.at(i - tiled);
    tiling->fill(i, scratch);
    return scratch;
}

}  // namespace simpler
