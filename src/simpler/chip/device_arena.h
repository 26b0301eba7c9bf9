// DeviceArena: the simulated chip's device memory — one large anonymous mapping
// and a first-fit allocator over it. DEVICE_MALLOC pointers (alloc_child_tensor)
// and staged copies of host arguments live here; an address from it is valid in
// the chip process only.
//
// Owns the mapping and every block in it; unmaps on destruction whatever is still
// allocated. Trusts nothing it is handed back: free() refuses a pointer outside
// the arena, one that is not the start of a live block, and a double free, each
// with its own message. Thread-safe (one mutex); the host layer throws
// (std::invalid_argument for a bad request or pointer, std::runtime_error when
// the arena is exhausted), the try_* forms are noexcept and answer 0 / false.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string_view>

namespace simpler::chip {

inline constexpr uint64_t DEVICE_ARENA_MIN_ALIGN = 64;   // every block starts on a cache line
inline constexpr uint64_t DEVICE_ARENA_DEFAULT_BYTES = uint64_t{1} << 30;
inline constexpr uint64_t DEVICE_ARENA_MAX_BYTES = uint64_t{1} << 46;  // 64 TiB

// Throws std::invalid_argument unless 0 < capacity_bytes <= DEVICE_ARENA_MAX_BYTES,
// naming the value `field` (a config names its own field).
void validate_arena_capacity(uint64_t capacity_bytes, std::string_view field = "DeviceArena.capacity");

struct ArenaStats {
    uint64_t capacity_bytes;
    uint64_t bytes_in_use;        // sum of live block sizes (rounded to DEVICE_ARENA_MIN_ALIGN)
    uint64_t peak_bytes_in_use;
    uint64_t live_allocations;
    uint64_t total_allocations;
    uint64_t largest_free_block;
};

class DeviceArena {
public:
    // Maps `capacity_bytes` (rounded up to the page size) with MAP_NORESERVE, so
    // untouched pages cost nothing. Throws std::invalid_argument for 0 and
    // std::runtime_error when the mapping fails.
    explicit DeviceArena(uint64_t capacity_bytes = DEVICE_ARENA_DEFAULT_BYTES);
    ~DeviceArena();
    DeviceArena(const DeviceArena&) = delete;
    DeviceArena& operator=(const DeviceArena&) = delete;

    // A block of at least `nbytes` aligned to `alignment` (a power of two; raised
    // to DEVICE_ARENA_MIN_ALIGN). Throws std::invalid_argument for nbytes == 0 or
    // a bad alignment, std::runtime_error when no free block fits.
    void* alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN);
    // As alloc(); 0 instead of throwing.
    uint64_t try_alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) noexcept;

    // Returns a block. Throws std::invalid_argument for a pointer outside the
    // arena, an interior pointer, or a block already freed.
    void free(void* p);
    // As free(); false instead of throwing (the arena is unchanged).
    bool try_free(uint64_t addr) noexcept;

    // True when [addr, addr + nbytes) lies inside the mapping.
    [[nodiscard]] bool contains(uint64_t addr, uint64_t nbytes = 1) const noexcept;
    [[nodiscard]] uint64_t base() const noexcept { return base_; }
    [[nodiscard]] uint64_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] ArenaStats stats() const;

private:
    enum class FreeRefusal { NONE, FOREIGN, NOT_LIVE, INTERIOR };
    FreeRefusal free_locked(uint64_t addr) noexcept;

    uint64_t base_ = 0;
    uint64_t capacity_ = 0;
    mutable std::mutex mu_;
    std::map<uint64_t, uint64_t> free_;             // offset -> size, coalesced
    std::map<uint64_t, uint64_t> live_;             // block offset -> (rounded) size
    uint64_t in_use_ = 0;
    uint64_t peak_ = 0;
    uint64_t total_ = 0;
};

}  // namespace simpler::chip
