#include "simpler/view/tile_index.h"

#include <bit>

namespace simpler {

namespace {

// x / pitch, by a shift when the pitch is a power of two (the common case).
uint64_t row_of(uint64_t x, uint64_t pitch) noexcept {
    return std::has_single_bit(pitch) ? x >> std::countr_zero(pitch) : x / pitch;
}

}  // namespace

uint64_t tile_pitch(const ViewBox& b) noexcept {
    if (!b.valid || b.ndims != 2 || b.strides[1] != 1 || b.begin >= b.end) return 0;
    return uint64_t{b.strides[0]} * b.elem;
}

std::optional<TileFootprint> tile_of(const ViewBox& b, uint64_t pitch) noexcept {
    if (pitch == 0 || tile_pitch(b) != pitch) return std::nullopt;
    TileFootprint t;
    t.row_begin = row_of(b.begin, pitch);
    t.col_begin = b.begin - t.row_begin * pitch;
    t.col_end = t.col_begin + uint64_t{b.shapes[1]} * b.elem;  // < 2^64: pitch and both terms fit 2^32 * elem
    if (t.col_end > pitch) return std::nullopt;                // a row wraps into the next
    if (__builtin_add_overflow(t.row_begin, uint64_t{b.shapes[0]}, &t.row_end)) return std::nullopt;
    // The box's last byte must be the last element of the last row: anything
    // else (a saturated end) is not the geometry assumed above.
    uint64_t last = 0;
    if (__builtin_mul_overflow(t.row_end - 1, pitch, &last) || __builtin_add_overflow(last, t.col_end, &last) ||
        last != b.end)
        return std::nullopt;
    return t;
}

TileIndex::CellKey TileIndex::key_of(const TileFootprint& at) noexcept {
    const unsigned row_level = RegionIndex::level_of(at.row_begin, at.row_end);
    const unsigned col_level = RegionIndex::level_of(at.col_begin, at.col_end);
    return CellKey{row_level * 64 + col_level, at.row_begin >> row_level, at.col_begin >> col_level};
}

TileIndex::Tile TileIndex::query_of(const ViewBox& probe) const noexcept {
    Tile q{Item{0, probe.begin, probe.end}, {}};
    if (const auto t = tile_of(probe, pitch_)) {
        q.at = *t;
    } else {
        q.at.row_begin = row_of(probe.begin, pitch_);
        q.at.row_end = row_of(probe.end - 1, pitch_) + 1;
        q.at.col_begin = 0;
        q.at.col_end = pitch_;
    }
    return q;
}

void TileIndex::file_in_grid(const Tile& t) {
    const CellKey key = key_of(t.at);
    cells_.emplace(key, t);
    for (LevelPair& lp : levels_)
        if (lp.levels == key.levels) {
            ++lp.count;
            return;
        }
    levels_.push_back(LevelPair{key.levels, 1});
}

bool TileIndex::insert(uint32_t id, const ViewBox& box) {
    const auto at = tile_of(box, size_ == 0 ? tile_pitch(box) : pitch_);
    if (!at) return false;
    if (size_++ == 0) pitch_ = tile_pitch(box);
    const Tile t{Item{id, box.begin, box.end}, *at};
    if (!grid_ && small_.size() < SMALL_LIMIT) {
        small_.push_back(t);
        return true;
    }
    if (!grid_) {
        for (const Tile& s : small_) file_in_grid(s);
        small_.clear();
        grid_ = true;
    }
    file_in_grid(t);
    return true;
}

bool TileIndex::erase(uint32_t id, const ViewBox& box) {
    if (size_ == 0 || tile_pitch(box) != pitch_) return false;
    auto same = [&](const Tile& t) { return t.item.id == id && t.item.begin == box.begin && t.item.end == box.end; };
    bool found = false;
    if (!grid_) {
        for (size_t i = 0; i < small_.size(); ++i) {
            if (!same(small_[i])) continue;
            small_[i] = small_.back();
            small_.pop_back();
            found = true;
            break;
        }
    } else {
        const auto at = tile_of(box, pitch_);
        if (!at) return false;
        const CellKey key = key_of(*at);
        const auto [first, last] = cells_.equal_range(key);
        for (auto it = first; it != last; ++it) {
            if (!same(it->second)) continue;
            cells_.erase(it);
            found = true;
            break;
        }
        if (found)
            for (size_t i = 0; i < levels_.size(); ++i) {
                if (levels_[i].levels != key.levels) continue;
                if (--levels_[i].count == 0) {
                    levels_[i] = levels_.back();
                    levels_.pop_back();
                }
                break;
            }
    }
    if (!found) return false;
    if (--size_ == 0) {
        grid_ = false;
        pitch_ = 0;
    }
    return true;
}

}  // namespace simpler
