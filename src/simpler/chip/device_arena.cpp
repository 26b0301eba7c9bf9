#include "simpler/chip/device_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "simpler/task_interface/field_refusal.h"

namespace simpler::chip {
namespace {

uint64_t round_up(uint64_t v, uint64_t a) noexcept { return (v + a - 1) & ~(a - 1); }

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace

void validate_arena_capacity(uint64_t capacity_bytes, std::string_view field) {
    if (capacity_bytes == 0) throw FieldRefusal(std::string(field), "must be > 0 (got 0)");
    if (capacity_bytes > DEVICE_ARENA_MAX_BYTES) throw FieldRefusal(std::string(field), "larger than 64 TiB");
}

DeviceArena::DeviceArena(uint64_t capacity_bytes) {
    validate_arena_capacity(capacity_bytes);
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    capacity_ = round_up(capacity_bytes, page);
    void* p = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error("DeviceArena: mmap of " + std::to_string(capacity_) +
                                 " bytes failed: " + std::strerror(errno));
    base_ = reinterpret_cast<uint64_t>(p);
    free_.emplace(0, capacity_);
}

DeviceArena::~DeviceArena() {
    if (base_ != 0) munmap(reinterpret_cast<void*>(base_), capacity_);
}

uint64_t DeviceArena::try_alloc(uint64_t nbytes, uint64_t alignment) noexcept {
    if (nbytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0 || nbytes > capacity_) return 0;
    if (alignment < DEVICE_ARENA_MIN_ALIGN) alignment = DEVICE_ARENA_MIN_ALIGN;
    const uint64_t size = round_up(nbytes, DEVICE_ARENA_MIN_ALIGN);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        const uint64_t start = it->first;
        const uint64_t len = it->second;
        // Alignment is of the absolute address; base_ is page-aligned.
        const uint64_t aligned = round_up(base_ + start, alignment) - base_;
        if (aligned - start > len || len - (aligned - start) < size) continue;
        free_.erase(it);
        if (aligned > start) free_.emplace(start, aligned - start);
        const uint64_t tail = start + len - (aligned + size);
        if (tail > 0) free_.emplace(aligned + size, tail);
        live_.emplace(aligned, size);
        in_use_ += size;
        if (in_use_ > peak_) peak_ = in_use_;
        ++total_;
        return base_ + aligned;
    }
    return 0;
}

void* DeviceArena::alloc(uint64_t nbytes, uint64_t alignment) {
    if (nbytes == 0) throw std::invalid_argument("DeviceArena.alloc: nbytes must be > 0 (got 0)");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw std::invalid_argument("DeviceArena.alloc: alignment must be a power of two (got " +
                                    std::to_string(alignment) + ")");
    const uint64_t addr = try_alloc(nbytes, alignment);
    if (addr == 0) {
        const ArenaStats s = stats();
        throw std::runtime_error("DeviceArena.alloc: out of device memory (requested " + std::to_string(nbytes) +
                                 " bytes, largest free block " + std::to_string(s.largest_free_block) + ", " +
                                 std::to_string(s.bytes_in_use) + " of " + std::to_string(s.capacity_bytes) +
                                 " in use)");
    }
    return reinterpret_cast<void*>(addr);
}

DeviceArena::FreeRefusal DeviceArena::free_locked(uint64_t addr) noexcept {
    if (!contains(addr)) return FreeRefusal::FOREIGN;
    const uint64_t off = addr - base_;
    auto it = live_.find(off);
    if (it == live_.end()) {
        // Inside a live block but not its start: interior pointer; otherwise freed or never allocated.
        auto b = live_.upper_bound(off);
        if (b != live_.begin() && off < std::prev(b)->first + std::prev(b)->second) return FreeRefusal::INTERIOR;
        return FreeRefusal::NOT_LIVE;
    }
    uint64_t start = off;
    uint64_t size = it->second;
    live_.erase(it);
    in_use_ -= size;
    // Coalesce with the neighbours.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + size) {
        size += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            size += prev->second;
            free_.erase(prev);
        }
    }
    free_.emplace(start, size);
    return FreeRefusal::NONE;
}

bool DeviceArena::try_free(uint64_t addr) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return free_locked(addr) == FreeRefusal::NONE;
}

void DeviceArena::free(void* p) {
    const uint64_t addr = reinterpret_cast<uint64_t>(p);
    FreeRefusal r;
    {
        std::lock_guard<std::mutex> lock(mu_);
        r = free_locked(addr);
    }
    switch (r) {
        case FreeRefusal::NONE: return;
        case FreeRefusal::FOREIGN:
            throw std::invalid_argument("DeviceArena.free: " + hex(addr) + " is not in this arena [" + hex(base_) +
                                        ", " + hex(base_ + capacity_) + ")");
        case FreeRefusal::INTERIOR:
            throw std::invalid_argument("DeviceArena.free: " + hex(addr) +
                                        " points inside a live block, not at its start");
        case FreeRefusal::NOT_LIVE:
            throw std::invalid_argument("DeviceArena.free: " + hex(addr) +
                                        " is not a live allocation (double free, or never allocated)");
    }
}

bool DeviceArena::contains(uint64_t addr, uint64_t nbytes) const noexcept {
    return addr >= base_ && addr - base_ < capacity_ && nbytes <= capacity_ - (addr - base_);
}

ArenaStats DeviceArena::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t largest = 0;
    for (const auto& [off, len] : free_) largest = len > largest ? len : largest;
    return ArenaStats{capacity_, in_use_, peak_, live_.size(), total_, largest};
}

}  // namespace simpler::chip
