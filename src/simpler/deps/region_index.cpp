#include "simpler/deps/region_index.h"

namespace simpler {

void RegionIndex::insert(uint32_t id, uint64_t begin, uint64_t end) {
    if (begin >= end) return;
    const unsigned level = level_of(begin, end);
    cells_[CellKey{level, begin >> level}].push_back(Item{id, begin, end});
    level_mask_ |= uint64_t{1} << level;
    ++level_count_[level];
    ++size_;
}

bool RegionIndex::erase(uint32_t id, uint64_t begin, uint64_t end) {
    if (begin >= end) return false;
    const unsigned level = level_of(begin, end);
    const auto it = cells_.find(CellKey{level, begin >> level});
    if (it == cells_.end()) return false;
    std::vector<Item>& items = it->second;
    for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].id != id || items[i].begin != begin || items[i].end != end) continue;
        items[i] = items.back();
        items.pop_back();
        if (items.empty()) cells_.erase(it);
        if (--level_count_[level] == 0) level_mask_ &= ~(uint64_t{1} << level);
        --size_;
        return true;
    }
    return false;
}

}  // namespace simpler
