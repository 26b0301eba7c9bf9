// GuardedBlock: one staged copy in checked mode (StagingMode::CHECKED) — a
// device block of GUARD + len + GUARD bytes whose middle `len` bytes are the
// staged range of one host backing. Every byte of the block starts as a fixed
// pattern (guard_byte); staging then copies the views in. seal() records which
// range bytes the run may change (the elements of the written views, given by
// add_written) and snapshots the range; changes() afterwards compares every
// other byte — both guards against the pattern, the rest of the range against
// the snapshot — and reports the first and last changed byte and how many
// changed.
//
// What it cannot see: a write that stores the byte already there (the guard's
// pattern byte, or the staged value), and a write that lands more than
// CHECKED_GUARD_BYTES before or after the range (in other arena memory).
//
// Borrows the block (the arena owns it); owns the intervals and the snapshot.
// Host layer: seal() may throw std::bad_alloc; changes() is noexcept.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace simpler::chip {

inline constexpr uint64_t CHECKED_GUARD_BYTES = 4096;  // on each side of a checked staged range

// The pattern byte at block offset `i` (period 256; every byte value occurs, none twice in a row).
constexpr unsigned char guard_byte(uint64_t i) noexcept { return static_cast<unsigned char>((i * 167 + 0x5B) & 0xFF); }

struct BlockChanges {
    uint64_t count = 0;  // changed bytes outside the written views (0: none)
    uint64_t first = 0;  // block offsets of the first and the last of them
    uint64_t last = 0;
};

class GuardedBlock {
public:
    // `block` holds block_bytes(len) bytes; fills all of them with the pattern.
    GuardedBlock(unsigned char* block, uint64_t len) noexcept;

    [[nodiscard]] static constexpr uint64_t block_bytes(uint64_t len) noexcept { return len + 2 * CHECKED_GUARD_BYTES; }
    [[nodiscard]] unsigned char* range() const noexcept { return block_ + CHECKED_GUARD_BYTES; }
    [[nodiscard]] uint64_t len() const noexcept { return len_; }

    // Range bytes [offset, offset + nbytes) are a written view's elements.
    void add_written(uint64_t offset, uint64_t nbytes);
    // After the copy-in: merges the written intervals and snapshots the range.
    void seal();
    // Every byte of block offsets [begin, end) outside the written intervals
    // that differs from what seal() saw.
    [[nodiscard]] BlockChanges changes(uint64_t begin = 0, uint64_t end = UINT64_MAX) const noexcept;
    // Whether range offset `offset` is inside a written interval (after seal()).
    [[nodiscard]] bool written(uint64_t offset) const noexcept;

private:
    void scan_range(uint64_t begin, uint64_t end, BlockChanges& c) const noexcept;

    unsigned char* block_;
    uint64_t len_;
    std::vector<std::pair<uint64_t, uint64_t>> written_;  // [begin, end) range offsets; sorted, disjoint after seal()
    std::unique_ptr<unsigned char[]> snapshot_;
};

}  // namespace simpler::chip
