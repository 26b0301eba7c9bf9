// SimulatedDevice: the chip device that is the chip process itself — its
// memory a DeviceArena (an anonymous mapping of the chip process), its kernels
// the C++ functions of a KernelRegistry called on the launching thread, its
// copies memcpy completed before they return.
//
// host_addressable (the default) is today's chip: the chip process reads
// device memory in place, so staging copies views element by element and
// zero-copy runs are allowed. With it off the device behaves as a discrete
// one: host_address() answers nullptr and unified_host_memory is false, so
// staging moves bytes only by copy_to_device / copy_to_host, as it must for a
// real accelerator (kernels still dereference device addresses, which are
// pointers of the chip process).
//
// A range adopted with adopt_range (the Worker's DEVICE_MALLOC heap of the
// chip, mapped before the fork) is memory of the chip process already: it is
// only recorded, so contains() and the copies accept it.
//
// Owns the arena; borrows the registry, which must outlive it. Thread-safe as
// the arena is (adopt ranges before the first run); launch() catches what a
// kernel throws and reports it.
#pragma once

#include <cstdint>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/device_arena.h"
#include "simpler/chip/kernel_registry.h"

namespace simpler::chip {

struct SimulatedDeviceOptions {
    uint64_t memory_bytes = DEVICE_ARENA_DEFAULT_BYTES;
    bool host_addressable = true;
    uint32_t compute_units = 1;  // what facts() reports (the runtime's core threads)
};

class SimulatedDevice final : public Device {
public:
    // Throws what DeviceArena throws for a bad size.
    explicit SimulatedDevice(const KernelRegistry& kernels, SimulatedDeviceOptions options = {});

    [[nodiscard]] const DeviceFacts& facts() const noexcept override { return facts_; }

    uint64_t alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) override;
    uint64_t try_alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) noexcept override;
    bool try_free(uint64_t addr) noexcept override;
    [[nodiscard]] bool contains(uint64_t addr, uint64_t nbytes = 1) const noexcept override;
    [[nodiscard]] ArenaStats memory_stats() const override { return arena_.stats(); }
    [[nodiscard]] void* host_address(uint64_t addr) const noexcept override;
    void adopt_range(uint64_t base, uint64_t nbytes) override;

    DeviceEvent copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) override;
    DeviceEvent copy_to_host(void* dst, uint64_t src, uint64_t nbytes) override;
    void wait(DeviceEvent /*event*/) override {}
    void synchronize() override {}

    void prepare(uint32_t /*kernel_id*/) override {}  // C++ kernels are ready once registered
    int32_t launch(uint32_t kernel_id, const KernelArgs& args) noexcept override;

    // The arena itself (tests read its block counts).
    [[nodiscard]] const DeviceArena& arena() const noexcept { return arena_; }

private:
    void check_range(const char* what, uint64_t addr, uint64_t nbytes) const;

    const KernelRegistry& kernels_;
    DeviceArena arena_;
    DeviceFacts facts_;
    bool host_addressable_;
    std::vector<DeviceRange> adopted_;
};

}  // namespace simpler::chip
