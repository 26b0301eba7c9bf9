#include "simpler/chip/guarded_block.h"

#include <algorithm>
#include <cstring>

namespace simpler::chip {
namespace {

constexpr uint64_t PATTERN_PERIOD = 256;

struct PatternTile {
    unsigned char bytes[PATTERN_PERIOD];
    constexpr PatternTile() : bytes() {
        for (uint64_t i = 0; i < PATTERN_PERIOD; ++i) bytes[i] = guard_byte(i);
    }
};
constexpr PatternTile TILE{};

void note(BlockChanges& c, uint64_t at) noexcept {
    if (c.count++ == 0) c.first = at;
    c.last = at;
}

}  // namespace

GuardedBlock::GuardedBlock(unsigned char* block, uint64_t len) noexcept : block_(block), len_(len) {
    const uint64_t total = block_bytes(len);
    for (uint64_t at = 0; at < total; at += PATTERN_PERIOD)
        std::memcpy(block_ + at, TILE.bytes, std::min(PATTERN_PERIOD, total - at));  // the period divides at
}

void GuardedBlock::add_written(uint64_t offset, uint64_t nbytes) {
    if (!written_.empty() && written_.back().second == offset) {
        written_.back().second += nbytes;  // the next row of a dense view
        return;
    }
    written_.emplace_back(offset, offset + nbytes);
}

void GuardedBlock::seal() {
    std::sort(written_.begin(), written_.end());
    size_t kept = 0;
    for (const auto& w : written_) {
        if (kept > 0 && w.first <= written_[kept - 1].second) {
            written_[kept - 1].second = std::max(written_[kept - 1].second, w.second);
        } else {
            written_[kept++] = w;
        }
    }
    written_.resize(kept);
    snapshot_ = std::make_unique_for_overwrite<unsigned char[]>(len_);
    std::memcpy(snapshot_.get(), range(), len_);
}

bool GuardedBlock::written(uint64_t offset) const noexcept {
    auto it = std::upper_bound(written_.begin(), written_.end(), std::pair<uint64_t, uint64_t>{offset, UINT64_MAX});
    return it != written_.begin() && offset < std::prev(it)->second;
}

// Range offsets [begin, end), all of them outside the written intervals.
void GuardedBlock::scan_range(uint64_t begin, uint64_t end, BlockChanges& c) const noexcept {
    const unsigned char* r = range();
    if (begin >= end || std::memcmp(r + begin, snapshot_.get() + begin, end - begin) == 0) return;
    for (uint64_t i = begin; i < end; ++i)
        if (r[i] != snapshot_[i]) note(c, CHECKED_GUARD_BYTES + i);
}

BlockChanges GuardedBlock::changes(uint64_t begin, uint64_t end) const noexcept {
    BlockChanges c;
    const uint64_t after = CHECKED_GUARD_BYTES + len_;
    end = std::min(end, block_bytes(len_));
    for (uint64_t i = begin; i < std::min(end, CHECKED_GUARD_BYTES); ++i)
        if (block_[i] != guard_byte(i)) note(c, i);
    // The range part of [begin, end), in range offsets, less the written intervals.
    const uint64_t rb = std::max(begin, CHECKED_GUARD_BYTES) - CHECKED_GUARD_BYTES;
    const uint64_t re = std::max(std::min(end, after), CHECKED_GUARD_BYTES) - CHECKED_GUARD_BYTES;
    uint64_t at = rb;
    for (const auto& [b, e] : written_) {
        if (e <= at) continue;
        if (b >= re) break;
        scan_range(at, b, c);
        at = e;
    }
    scan_range(at, re, c);
    for (uint64_t i = std::max(begin, after); i < end; ++i)
        if (block_[i] != guard_byte(i)) note(c, i);
    return c;
}

}  // namespace simpler::chip
