// TileIndex: the live 2-D tiles of one backing that share one row pitch, filed
// by (row range x column range), so that a lookup among many tiles of a matrix
// visits only the tiles whose rows AND columns meet the probe's, not every tile
// whose byte range meets (a tile's byte range spans its whole tile row).
//
// A tile (tile_of()) is a valid 2-D view with unit inner stride whose row fits
// in one row of pitch p = strides[0] * elem bytes: with c0 = begin mod p and
// c1 = c0 + shapes[1] * elem <= p, its bytes lie within rows
// [begin / p, begin / p + shapes[0]), bytes [c0, c1) of each row. Two tiles of
// one pitch that share a byte therefore have meeting rows and meeting columns.
// Nothing else about the view matters (dtype, origin on a lattice): the index
// is stage 1 only, and overlap() decides.
//
// The pitch is the first tile's; the index takes only tiles of that pitch
// (insert() answers false for anything else) and forgets it when it empties.
// A lookup with a tile of that pitch visits tiles whose rows and columns meet;
// any other probe asks by byte range and visits the tiles of the rows its range
// reaches whose byte ranges meet. Either way no tile that may share a byte with
// the probe is missed; a visited tile may share none (overlap() rejects it).
//
// Structure: RegionIndex's hierarchical grid in two dimensions: a tile of
// rows [r0, r1) and columns [c0, c1) is filed at the level pair (lr, lc) =
// (ceil(log2(r1 - r0)), ceil(log2(c1 - c0))), cell (r0 >> lr, c0 >> lc), in one
// ordered multimap keyed by (level pair, row cell, column cell). A lookup
// visits, per non-empty level pair, the row cells (r0 >> lr) - 1 .. (r1 - 1) >> lr
// and in each the column cells likewise, jumping over a row cell's columns out of
// range with one lower_bound. Up to SMALL_LIMIT tiles sit in a flat array.
//
// Nodes come from the memory resource given at construction. Does not own what
// the ids name and does not dedupe: an id is erased with the box it was
// inserted with. Trusts its caller for that; any ViewBox is accepted.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <vector>

#include "simpler/view/region_index.h"
#include "simpler/view/view_box.h"

namespace simpler {

// Rows of pitch `pitch` bytes and byte columns within a row that hold a view's bytes.
struct TileFootprint {
    uint64_t row_begin = 0;
    uint64_t row_end = 0;  // row_begin < row_end
    uint64_t col_begin = 0;
    uint64_t col_end = 0;  // col_begin < col_end <= pitch
};

// The row pitch in bytes of a box that is a 2-D tile; 0 when it is not one.
uint64_t tile_pitch(const ViewBox& b) noexcept;
// The footprint of box b as a tile of pitch `pitch`; empty when b is not one.
std::optional<TileFootprint> tile_of(const ViewBox& b, uint64_t pitch) noexcept;

class TileIndex {
public:
    using Item = RegionIndex::Item;
    static constexpr size_t SMALL_LIMIT = 64;

    explicit TileIndex(std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : small_(memory), cells_(memory), levels_(memory) {}

    // Files box under id and answers true when it is a tile of the index's pitch
    // (any tile's when the index is empty); otherwise files nothing, false.
    bool insert(uint32_t id, const ViewBox& box);
    // Removes the tile filed for (id, box); false when there is none.
    bool erase(uint32_t id, const ViewBox& box);

    // Calls f(const Item&) once for every filed tile that may share a byte with
    // probe (see the header comment). f must not modify the index.
    template <class F>
    void for_each_meeting(const ViewBox& probe, F&& f) const {
        if (size_ == 0 || probe.begin >= probe.end) return;
        if (!grid_) {  // the probe's rows and columns are worked out once a byte range meets
            Tile q{};
            bool known = false;
            for (const Tile& t : small_) {
                if (t.item.begin >= probe.end || probe.begin >= t.item.end) continue;
                if (!known) q = query_of(probe);
                known = true;
                if (meets(t, q)) f(t.item);
            }
            return;
        }
        const Tile q = query_of(probe);
        for (const LevelPair& lp : levels_) visit_level(lp, q, f);
    }

    [[nodiscard]] size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    // The pitch of the filed tiles in bytes; 0 when empty.
    [[nodiscard]] uint64_t pitch() const noexcept { return pitch_; }

private:
    struct Tile {
        Item item;
        TileFootprint at;
    };
    struct CellKey {
        uint32_t levels;  // row level * 64 + column level
        uint64_t row;
        uint64_t col;
        friend auto operator<=>(const CellKey&, const CellKey&) = default;
    };
    struct LevelPair {
        uint32_t levels;
        uint32_t count;
    };

    static bool meets(const Tile& t, const Tile& q) noexcept {
        return t.at.row_begin < q.at.row_end && q.at.row_begin < t.at.row_end && t.at.col_begin < q.at.col_end &&
               q.at.col_begin < t.at.col_end && t.item.begin < q.item.end && q.item.begin < t.item.end;
    }
    static CellKey key_of(const TileFootprint& at) noexcept;
    // The probe as a query: its own rows and columns when it is a tile of the
    // pitch, else the whole rows its byte range reaches; its byte range either way.
    [[nodiscard]] Tile query_of(const ViewBox& probe) const noexcept;

    template <class F>
    void visit_level(const LevelPair& lp, const Tile& q, F& f) const {
        const unsigned row_level = lp.levels / 64, col_level = lp.levels % 64;
        const uint64_t first_row = q.at.row_begin >> row_level, first_col = q.at.col_begin >> col_level;
        const uint64_t row_lo = first_row == 0 ? 0 : first_row - 1, row_hi = (q.at.row_end - 1) >> row_level;
        const uint64_t col_lo = first_col == 0 ? 0 : first_col - 1, col_hi = (q.at.col_end - 1) >> col_level;
        auto it = cells_.lower_bound(CellKey{lp.levels, row_lo, col_lo});
        while (it != cells_.end() && it->first.levels == lp.levels && it->first.row <= row_hi) {
            const CellKey& k = it->first;
            if (k.col > col_hi) {  // past this row cell's columns: on to the next row cell
                if (k.row == row_hi) return;
                it = cells_.lower_bound(CellKey{lp.levels, k.row + 1, col_lo});
                continue;
            }
            if (k.col < col_lo) {  // a new row cell, before the columns
                it = cells_.lower_bound(CellKey{lp.levels, k.row, col_lo});
                continue;
            }
            if (meets(it->second, q)) f(it->second.item);
            ++it;
        }
    }
    void file_in_grid(const Tile& t);

    std::pmr::vector<Tile> small_;  // the tiles, while !grid_
    bool grid_ = false;
    std::pmr::multimap<CellKey, Tile> cells_;
    std::pmr::vector<LevelPair> levels_;  // the non-empty level pairs
    uint64_t pitch_ = 0;
    size_t size_ = 0;
};

}  // namespace simpler
