// RegionIndex: the live byte ranges of one backing, so that finding the
// entries whose range meets a query range (stage 1 of the overlap question) is
// sub-linear in the number of live entries.
//
// Structure: a hierarchical grid. A range of length len is filed at level
// l = ceil(log2(len)) (at most 63), in cell begin >> l; it then lies within
// cells c and c + 1 of its level. A query [a, b) visits, on each non-empty
// level, the cells from (a >> l) - 1 to (b - 1) >> l through one ordered
// multimap keyed by (level, cell), so
// its cost is O(levels * log n) plus the cells that hold a match: every filed
// range in a visited cell past the first two begins inside [a, b). A level
// whose ranges all end at or before a is skipped in O(1) (its largest end is
// kept): the common case of tiles filed and looked up in address order.
//
// While it holds at most SMALL_LIMIT ranges they sit in a flat array that a
// query scans (cheaper than any tree at that size); past it they move to the
// grid, and move back when the index empties.
//
// Nodes come from the memory resource given at construction (the tracker
// passes a pool). Does not own what the ids name, and does not dedupe: an id is filed once per
// insert and must be erased with the range it was inserted with. Trusts its
// caller for that; an empty range (begin >= end) is never filed.
#pragma once

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <vector>

namespace simpler {

class RegionIndex {
public:
    struct Item {
        uint32_t id;
        uint64_t begin;
        uint64_t end;
    };

    static constexpr size_t SMALL_LIMIT = 64;

    explicit RegionIndex(std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : small_(memory), cells_(memory) {}

    void insert(uint32_t id, uint64_t begin, uint64_t end);
    // Removes the item filed for (id, begin, end); false when there is none.
    bool erase(uint32_t id, uint64_t begin, uint64_t end);

    // Calls f(const Item&) once for every filed range meeting [begin, end);
    // touching ranges do not meet. f must not modify the index.
    template <class F>
    void for_each_overlapping(uint64_t begin, uint64_t end, F&& f) const {
        if (begin >= end) return;
        if (!grid_) {
            for (const Item& item : small_)
                if (item.begin < end && begin < item.end) f(item);
            return;
        }
        uint64_t mask = level_mask_;
        while (mask != 0) {
            const unsigned level = static_cast<unsigned>(std::countr_zero(mask));
            mask &= mask - 1;
            if (begin >= level_reach_[level]) continue;  // every range of the level ends before: no descent
            const uint64_t first_cell = begin >> level;
            const uint64_t lo = first_cell == 0 ? 0 : first_cell - 1;
            const uint64_t hi = (end - 1) >> level;
            for (auto it = cells_.lower_bound(CellKey{level, lo});
                 it != cells_.end() && it->first.level == level && it->first.cell <= hi; ++it)
                if (it->second.begin < end && begin < it->second.end) f(it->second);
        }
    }

    [[nodiscard]] size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

    static unsigned level_of(uint64_t begin, uint64_t end) noexcept {
        const uint64_t len = end - begin;
        const unsigned l = len <= 1 ? 0u : static_cast<unsigned>(std::bit_width(len - 1));
        return l > 63 ? 63u : l;
    }

private:
    struct CellKey {
        uint64_t level;
        uint64_t cell;
        friend auto operator<=>(const CellKey&, const CellKey&) = default;
    };
    void file_in_grid(const Item& item);

    std::pmr::vector<Item> small_;  // the ranges, while !grid_
    bool grid_ = false;
    std::pmr::multimap<CellKey, Item> cells_;
    uint64_t level_mask_ = 0;        // bit l set when level l holds an item
    uint32_t level_count_[64] = {};  // items per level
    // Per level, the largest end of a range filed since the level was last
    // empty: a query that begins at or past it meets nothing there, and skips
    // the level's tree descent (tiles filed in address order, each looked up
    // before it is filed: the next tile of a batch begins where the last ends).
    uint64_t level_reach_[64] = {};
    size_t size_ = 0;
};

}  // namespace simpler
