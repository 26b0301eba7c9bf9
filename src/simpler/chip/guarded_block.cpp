#include "simpler/chip/guarded_block.h"

#include <algorithm>
#include <cstring>

namespace simpler::chip {
namespace {

constexpr uint64_t PATTERN_PERIOD = 256;

struct PatternTile {
    unsigned char bytes[2 * PATTERN_PERIOD];  // two periods: any phase has a period's worth after it
    constexpr PatternTile() : bytes() {
        for (uint64_t i = 0; i < 2 * PATTERN_PERIOD; ++i) bytes[i] = guard_byte(i);
    }
};
constexpr PatternTile TILE{};

// Writes the pattern of block offsets [begin, end) at `block + begin`.
void fill_pattern(unsigned char* block, uint64_t begin, uint64_t end) noexcept {
    for (uint64_t at = begin; at < end;) {
        const uint64_t n = std::min(PATTERN_PERIOD, end - at);
        std::memcpy(block + at, TILE.bytes + at % PATTERN_PERIOD, n);
        at += n;
    }
}

void note(BlockChanges& c, uint64_t at) noexcept {
    if (c.count++ == 0) c.first = at;
    c.last = at;
}

// Notes every byte of block offsets [begin, end) that differs from the pattern.
void scan_pattern(const unsigned char* block, uint64_t begin, uint64_t end, BlockChanges& c) noexcept {
    for (uint64_t at = begin; at < end;) {
        const uint64_t n = std::min(PATTERN_PERIOD, end - at);
        if (std::memcmp(block + at, TILE.bytes + at % PATTERN_PERIOD, n) != 0)
            for (uint64_t i = at; i < at + n; ++i)
                if (block[i] != guard_byte(i)) note(c, i);
        at += n;
    }
}

}  // namespace

GuardedBlock::GuardedBlock(unsigned char* block, uint64_t len) noexcept : block_(block), len_(len) {
    fill_pattern(block_, 0, CHECKED_GUARD_BYTES);
    fill_pattern(block_, CHECKED_GUARD_BYTES + len_, block_bytes(len_));
}

void GuardedBlock::add(Intervals& list, uint64_t offset, uint64_t nbytes) {
    if (!list.empty() && list.back().second == offset) {
        list.back().second += nbytes;  // the next row of a dense view
        return;
    }
    list.emplace_back(offset, offset + nbytes);
}

void GuardedBlock::merge(Intervals& list) {
    std::sort(list.begin(), list.end());
    size_t kept = 0;
    for (const auto& w : list) {
        if (kept > 0 && w.first <= list[kept - 1].second) {
            list[kept - 1].second = std::max(list[kept - 1].second, w.second);
        } else {
            list[kept++] = w;
        }
    }
    list.resize(kept);
}

uint64_t GuardedBlock::seal() {
    merge(staged_);
    merge(written_);
    uint64_t at = 0;
    for (const auto& [b, e] : staged_) {
        fill_pattern(block_, CHECKED_GUARD_BYTES + at, CHECKED_GUARD_BYTES + b);
        at = e;
    }
    fill_pattern(block_, CHECKED_GUARD_BYTES + at, CHECKED_GUARD_BYTES + len_);
    kept_.clear();
    uint64_t snap = 0;
    at = 0;
    for (const auto& [b, e] : written_) {
        if (b > at) kept_.push_back({at, b, snap}), snap += b - at;
        at = e;
    }
    if (len_ > at) kept_.push_back({at, len_, snap}), snap += len_ - at;
    return snap;
}

void GuardedBlock::snapshot(unsigned char* storage) noexcept {
    snapshot_ = storage;
    for (const Kept& k : kept_) std::memcpy(storage + k.at, range() + k.begin, k.end - k.begin);
}

BlockChanges GuardedBlock::changes(uint64_t begin, uint64_t end) const noexcept {
    BlockChanges c;
    const uint64_t after = CHECKED_GUARD_BYTES + len_;
    end = std::min(end, block_bytes(len_));
    scan_pattern(block_, begin, std::min(end, CHECKED_GUARD_BYTES), c);
    // The range part of [begin, end), in range offsets, where the run may not write.
    const uint64_t rb = std::max(begin, CHECKED_GUARD_BYTES) - CHECKED_GUARD_BYTES;
    const uint64_t re = std::max(std::min(end, after), CHECKED_GUARD_BYTES) - CHECKED_GUARD_BYTES;
    const unsigned char* r = range();
    for (const Kept& k : kept_) {
        const uint64_t b = std::max(k.begin, rb), e = std::min(k.end, re);
        if (b >= e) continue;
        const unsigned char* expected = snapshot_ + k.at + (b - k.begin);  // range offset b's snapshot byte
        if (std::memcmp(r + b, expected, e - b) == 0) continue;
        for (uint64_t i = b; i < e; ++i)
            if (r[i] != expected[i - b]) note(c, CHECKED_GUARD_BYTES + i);
    }
    scan_pattern(block_, std::max(begin, after), end, c);
    return c;
}

}  // namespace simpler::chip
