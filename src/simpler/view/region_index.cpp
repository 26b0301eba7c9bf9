#include "simpler/view/region_index.h"

#include <algorithm>

namespace simpler {

void RegionIndex::file_in_grid(const Item& item) {
    const unsigned level = level_of(item.begin, item.end);
    // Tiles are usually filed in address order: hinted at the end, such an insert
    // skips the descent (amortized constant); any other key falls back to the
    // plain insert, at the end of its equal range either way (the same order).
    cells_.emplace_hint(cells_.end(), CellKey{level, item.begin >> level}, item);
    level_mask_ |= uint64_t{1} << level;
    level_reach_[level] = level_count_[level]++ == 0 ? item.end : std::max(level_reach_[level], item.end);
}

void RegionIndex::insert(uint32_t id, uint64_t begin, uint64_t end) {
    if (begin >= end) return;
    ++size_;
    if (!grid_ && small_.size() < SMALL_LIMIT) {
        small_.push_back(Item{id, begin, end});
        return;
    }
    if (!grid_) {
        for (const Item& item : small_) file_in_grid(item);
        small_.clear();
        grid_ = true;
    }
    file_in_grid(Item{id, begin, end});
}

bool RegionIndex::erase(uint32_t id, uint64_t begin, uint64_t end) {
    if (begin >= end) return false;
    if (!grid_) {
        for (size_t i = 0; i < small_.size(); ++i) {
            if (small_[i].id != id || small_[i].begin != begin || small_[i].end != end) continue;
            small_[i] = small_.back();
            small_.pop_back();
            --size_;
            return true;
        }
        return false;
    }
    const unsigned level = level_of(begin, end);
    const auto [first, last] = cells_.equal_range(CellKey{level, begin >> level});
    for (auto it = first; it != last; ++it) {
        const Item& item = it->second;
        if (item.id != id || item.begin != begin || item.end != end) continue;
        cells_.erase(it);
        if (--level_count_[level] == 0) level_mask_ &= ~(uint64_t{1} << level);
        if (--size_ == 0) grid_ = false;
        return true;
    }
    return false;
}

}  // namespace simpler
