// GuardedBlock: one staged copy in checked mode (StagingMode::CHECKED) — a
// device block of GUARD + len + GUARD bytes whose middle `len` bytes are the
// staged range of one host backing. The guards hold a fixed pattern
// (guard_byte, by block offset); staging copies the views in and names the
// bytes it copied (add_staged) and the bytes the run may change (add_written,
// the elements of the written views); seal() fills every range byte that was
// not copied in with the pattern too and says how many bytes the run may not
// change; snapshot() copies those into storage the caller provides. changes()
// afterwards compares every byte the run may not change — both guards against
// the pattern, the rest of the range against the snapshot — and reports the
// first and last changed byte and how many changed.
//
// What it cannot see: a write that stores the byte already there (the guard's
// pattern byte, or the staged value), and a write that lands more than
// CHECKED_GUARD_BYTES before or after the range (in other arena memory).
//
// Borrows the block and the snapshot storage (the arena owns both); owns the
// intervals. Host layer: add_* and seal() may throw std::bad_alloc; changes()
// is noexcept.
#pragma once

#include <cstdint>
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
    // `block` holds block_bytes(len) bytes; fills both guards with the pattern.
    GuardedBlock(unsigned char* block, uint64_t len) noexcept;

    [[nodiscard]] static constexpr uint64_t block_bytes(uint64_t len) noexcept { return len + 2 * CHECKED_GUARD_BYTES; }
    [[nodiscard]] unsigned char* range() const noexcept { return block_ + CHECKED_GUARD_BYTES; }
    [[nodiscard]] uint64_t len() const noexcept { return len_; }

    // Range bytes [offset, offset + nbytes) were copied in from the host.
    void add_staged(uint64_t offset, uint64_t nbytes) { add(staged_, offset, nbytes); }
    // Range bytes [offset, offset + nbytes) are a written view's elements.
    void add_written(uint64_t offset, uint64_t nbytes) { add(written_, offset, nbytes); }
    // After the copy-in: fills the range bytes not copied in with the pattern;
    // returns how many range bytes the run may not change (snapshot()'s size).
    uint64_t seal();
    // Copies those bytes into `storage` (seal()'s count of them), which must
    // outlive every changes() call.
    void snapshot(unsigned char* storage) noexcept;
    // Every byte of block offsets [begin, end) outside the written intervals
    // that differs from what seal() saw.
    [[nodiscard]] BlockChanges changes(uint64_t begin = 0, uint64_t end = UINT64_MAX) const noexcept;

private:
    using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;  // [begin, end) range offsets
    struct Kept {
        uint64_t begin, end;  // range offsets the run may not change
        uint64_t at;          // where they sit in the snapshot
    };
    static void add(Intervals& list, uint64_t offset, uint64_t nbytes);
    static void merge(Intervals& list);

    unsigned char* block_;
    uint64_t len_;
    Intervals staged_;               // sorted, disjoint after seal()
    Intervals written_;              // sorted, disjoint after seal()
    std::vector<Kept> kept_;         // the complement of written_, in order
    const unsigned char* snapshot_ = nullptr;
};

}  // namespace simpler::chip
