#include "simpler/task_interface/tiling.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

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

std::vector<TaskArgs> tile_task_args(std::span<const TileOperand> operands) {
    if (operands.empty()) throw std::invalid_argument("tiles: no operands");
    std::optional<std::vector<uint32_t>> grid;
    size_t first = 0;
    for (size_t i = 0; i < operands.size(); ++i) {
        if (operands[i].tile.empty()) continue;
        std::vector<uint32_t> g = tile_grid(operands[i], i);
        if (!grid) {
            grid = std::move(g);
            first = i;
        } else if (g != *grid) {
            throw std::invalid_argument("tiles: operand " + std::to_string(i) + "'s grid " + dims_text(g) +
                                        " differs from operand " + std::to_string(first) + "'s " + dims_text(*grid));
        }
    }
    if (!grid) throw std::invalid_argument("tiles: no operand is tiled (every tile is empty)");
    size_t count = 1;
    for (uint32_t g : *grid) count *= g;
    std::vector<TaskArgs> out(count);
    std::vector<uint32_t> at(grid->size(), 0);  // the grid index of task k
    for (size_t k = 0; k < count; ++k) {
        TaskArgs& args = out[k];
        args.reserve(operands.size());  // one allocation per list, not one per doubling
        for (size_t i = 0; i < operands.size(); ++i) {
            const TileOperand& op = operands[i];
            if (op.tile.empty()) {
                args.add_tensor(op.tensor, op.tag);
                continue;
            }
            Tensor t = op.tensor;
            uint64_t first_element = 0;
            for (size_t d = 0; d < at.size(); ++d) {
                const uint32_t begin = at[d] * op.tile[d];
                t.shapes[d] = std::min(op.tile[d], op.tensor.shapes[d] - begin);
                first_element += uint64_t{begin} * op.tensor.strides[d];
            }
            t.byte_offset += first_element * data_type_element_size(op.tensor.dtype);
            try {
                args.add_tensor(t, op.tag);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument("tiles: operand " + std::to_string(i) + ", tile " + dims_text(at) + ": " +
                                            e.what());
            }
        }
        for (size_t d = at.size(); d-- > 0;) {  // next grid index, last dimension fastest
            if (++at[d] < (*grid)[d]) break;
            at[d] = 0;
        }
    }
    return out;
}

}  // namespace simpler
