// RegionDevice<Buffer>: a KernelDevice whose memory the chip process cannot
// dereference, kept as DeviceRegions<Buffer> (device_regions.h): alloc,
// try_alloc, try_free, contains and memory_stats answer from the regions'
// arena, host_address is always nullptr (the bytes move only by copies), and
// adopt_range checks the range and asks the device for a buffer to back it
// (make_region). The OpenCL device (a cl_mem a region) and the CUDA device (a
// CUdeviceptr a region) are two.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "simpler/chip/device_regions.h"
#include "simpler/chip/kernel_device.h"

namespace simpler::chip {

template <typename Buffer>
class RegionDevice : public KernelDevice {
public:
    uint64_t alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) override {
        return reinterpret_cast<uint64_t>(regions_.addresses().alloc(nbytes, alignment));
    }
    uint64_t try_alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) noexcept override {
        return regions_.addresses().try_alloc(nbytes, alignment);
    }
    bool try_free(uint64_t addr) noexcept override { return regions_.addresses().try_free(addr); }
    [[nodiscard]] bool contains(uint64_t addr, uint64_t nbytes = 1) const noexcept override {
        return regions_.region_of(addr, nbytes) != nullptr;
    }
    [[nodiscard]] ArenaStats memory_stats() const override { return regions_.addresses().stats(); }
    [[nodiscard]] void* host_address(uint64_t /*addr*/) const noexcept override { return nullptr; }
    void adopt_range(uint64_t base, uint64_t nbytes) override {
        regions_.check_adoptable(base, nbytes);
        regions_.add({base, nbytes}, make_region(nbytes, "adopted heap (the Worker's device_memory_bytes)"));
    }

    // (buffer, offset) of [addr, addr + nbytes); std::invalid_argument naming
    // `what` when no region holds the range whole.
    [[nodiscard]] std::pair<Buffer, uint64_t> resolve(const char* what, uint64_t addr, uint64_t nbytes) const {
        return regions_.resolve(what, addr, nbytes);
    }

protected:
    // An arena of memory_bytes addresses; `device` names the device in messages.
    RegionDevice(uint64_t memory_bytes, std::string device) : regions_(memory_bytes, std::move(device)) {}
    // A buffer of nbytes on the device, `what` naming it in an error.
    virtual Buffer make_region(uint64_t nbytes, const std::string& what) = 0;

    DeviceRegions<Buffer> regions_;
};

}  // namespace simpler::chip
