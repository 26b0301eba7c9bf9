// DeviceRegions<Buffer>: the address space of a discrete device, whose memory
// the chip process cannot dereference (an OpenCL device, a CUDA GPU). A
// DeviceArena over a mapping made inaccessible hands out addresses that are
// unique in the process and that nothing in it may touch; each region — the
// device memory behind the arena's addresses, then each range adopted with
// Device::adopt_range (the Worker's DEVICE_MALLOC heap of the chip) — maps a
// range of addresses to one device buffer (a cl_mem, a CUdeviceptr), and an
// address resolves to (buffer, offset).
//
// Does not own the buffers: the device makes and releases them. Regions are
// added while the chip starts, before any thread resolves through them.
// Host layer: check_adoptable and resolve throw std::invalid_argument naming
// the range and the device.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/device_arena.h"

namespace simpler::chip {

// "0x7f00..." for a device address in a message.
inline std::string device_address_text(uint64_t addr) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
    return buf;
}

template <typename Buffer>
class DeviceRegions {
public:
    struct Region {
        DeviceRange range;
        Buffer buffer;
    };

    // An arena of memory_bytes addresses (DeviceArena's limits), whose pages
    // are never touched; `device` names the device in messages.
    DeviceRegions(uint64_t memory_bytes, std::string device) : addresses_(memory_bytes), device_(std::move(device)) {
        mprotect(reinterpret_cast<void*>(addresses_.base()), addresses_.capacity(), PROT_NONE);
    }

    [[nodiscard]] DeviceArena& addresses() noexcept { return addresses_; }
    [[nodiscard]] const DeviceArena& addresses() const noexcept { return addresses_; }
    // The arena's addresses: the range the first region maps.
    [[nodiscard]] DeviceRange arena_range() const noexcept { return {addresses_.base(), addresses_.capacity()}; }

    // Throws std::invalid_argument for an empty or wrapping range, or one that
    // overlaps a region already.
    void check_adoptable(uint64_t base, uint64_t nbytes) const {
        if (nbytes == 0 || base + nbytes < base)
            throw std::invalid_argument("adopt_range: an empty or wrapping range at " + device_address_text(base));
        for (const Region& r : regions_)
            if (r.range.overlaps(base, nbytes))
                throw std::invalid_argument("adopt_range: " + device_address_text(base) + " + " +
                                            std::to_string(nbytes) + " bytes overlaps device memory of '" + device_ +
                                            "' at " + device_address_text(r.range.base));
    }
    void add(DeviceRange range, Buffer buffer) { regions_.push_back({range, std::move(buffer)}); }

    // The region holding [addr, addr + nbytes) whole; nullptr when none does.
    [[nodiscard]] const Region* region_of(uint64_t addr, uint64_t nbytes) const noexcept {
        for (const Region& r : regions_)
            if (r.range.holds(addr, nbytes)) return &r;
        return nullptr;
    }
    // (buffer, offset) of [addr, addr + nbytes); std::invalid_argument naming
    // `what` when no region holds the range whole.
    [[nodiscard]] std::pair<Buffer, uint64_t> resolve(const char* what, uint64_t addr, uint64_t nbytes) const {
        if (const Region* r = region_of(addr, nbytes); r != nullptr) return {r->buffer, addr - r->range.base};
        throw std::invalid_argument(std::string(what) + ": device range " + device_address_text(addr) + " + " +
                                    std::to_string(nbytes) + " bytes is not inside the memory of '" + device_ + "'");
    }
    [[nodiscard]] const std::vector<Region>& regions() const noexcept { return regions_; }

private:
    DeviceArena addresses_;
    std::string device_;
    std::vector<Region> regions_;  // [0]: the device memory behind addresses_; then the adopted ranges
};

}  // namespace simpler::chip
