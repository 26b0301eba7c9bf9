// Device: what a chip drives to run its work — device memory, host<->device
// copies, kernel launch, synchronisation and the device's facts. The chip's
// runtime, staging and lane reach a device only through this interface, so a
// new kind of device is one more implementation and one more DeviceKind.
//
// Device addresses are 64-bit values the device resolves. Whether the chip
// process may dereference one is the device's to say (host_address): the
// simulated device's memory is host memory of the chip process; a discrete
// device's is not, and its bytes move only by copy_to_device / copy_to_host.
//
// Copies are asynchronous and ordered in issue order: each returns an event,
// and the source must stay unchanged and the destination unread until wait()
// on it (or synchronize()) returns. launch() runs one kernel to completion on
// the calling thread's behalf; several threads may launch at once.
//
// Owns its memory; frees it on destruction. Host layer: alloc and the copies
// throw (std::invalid_argument for a request outside device memory,
// std::runtime_error when the device fails or is full, naming the device);
// the try_* forms and launch() are noexcept and report by value.
#pragma once

#include <cstdint>
#include <string>

#include "simpler/chip/device_arena.h"
#include "simpler/chip/kernel_api.h"

namespace simpler::chip {

// CUDA: an NVIDIA GPU through the CUDA driver (cuda/cuda_device.h); no chip
// runs on one yet, and device_catalog.h says so.
enum class DeviceKind : uint8_t { SIMULATED = 0, OPENCL = 1, CUDA = 2 };
// The highest DeviceKind: a value above it (from a config or a shared page) names no device.
inline constexpr DeviceKind LAST_DEVICE_KIND = DeviceKind::CUDA;

// "simulated", "opencl", "cuda".
const char* device_kind_name(DeviceKind kind) noexcept;

// Which device a chip drives.
struct DeviceChoice {
    DeviceKind kind = DeviceKind::SIMULATED;
    std::string platform;  // a part of the platform's name, any case (empty: every platform)
    uint32_t index = 0;    // which of the devices found: index modulo their count (a Worker: the chip's index)

    bool operator==(const DeviceChoice&) const = default;
};

struct DeviceFacts {
    DeviceKind kind = DeviceKind::SIMULATED;
    std::string platform;           // who provides the device ("simpler" for the simulated one)
    std::string name;               // the device's own name
    std::string version;            // what the driver says of itself ("OpenCL 3.0 PoCL 3.1 ..."; "" when simulated)
    std::string uuid;               // a CUDA device's UUID ("GPU-8f3a...", as nvidia-smi writes it); else ""
    uint64_t memory_bytes = 0;      // the chip's device heap
    uint32_t compute_units = 0;     // CL_DEVICE_MAX_COMPUTE_UNITS; a GPU's SMs; simulated: core threads
    // Kernels the device runs at once, each over all of its compute units (0:
    // one per chip core thread). An orchestration is told to tile for no more
    // cores than this (OrchestrationContext::core_count).
    uint32_t concurrent_kernels = 0;
    bool unified_host_memory = false;  // kernels may read and write host memory in place (zero-copy runs)
};

// A range of device addresses [base, base + nbytes).
struct DeviceRange {
    uint64_t base = 0;
    uint64_t nbytes = 0;

    // True when [addr, addr + n) lies inside this range.
    [[nodiscard]] bool holds(uint64_t addr, uint64_t n) const noexcept {
        return addr >= base && n <= nbytes && addr - base <= nbytes - n;
    }
    // True when [addr, addr + n) shares a byte with this range.
    [[nodiscard]] bool overlaps(uint64_t addr, uint64_t n) const noexcept {
        return addr < base + nbytes && base < addr + n;
    }
};

// A copy in flight; 0 is one already complete.
using DeviceEvent = uint64_t;

class Device {
public:
    Device() = default;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    virtual ~Device() = default;

    [[nodiscard]] virtual const DeviceFacts& facts() const noexcept = 0;

    // Device memory. A block of at least nbytes aligned to `alignment` (a power
    // of two); throws std::invalid_argument for a bad request,
    // std::runtime_error when nothing fits. try_alloc answers 0 instead.
    virtual uint64_t alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) = 0;
    virtual uint64_t try_alloc(uint64_t nbytes, uint64_t alignment = DEVICE_ARENA_MIN_ALIGN) noexcept = 0;
    // Returns a block from alloc; false (nothing changed) for anything else.
    virtual bool try_free(uint64_t addr) noexcept = 0;
    // True when [addr, addr + nbytes) lies inside this device's memory.
    [[nodiscard]] virtual bool contains(uint64_t addr, uint64_t nbytes = 1) const noexcept = 0;
    [[nodiscard]] virtual ArenaStats memory_stats() const = 0;
    // Where the chip process reaches device address `addr` directly; nullptr
    // when it cannot (the bytes move only by copies).
    [[nodiscard]] virtual void* host_address(uint64_t addr) const noexcept = 0;
    // Makes [base, base + nbytes) device memory of this device too: addresses
    // another allocator hands out (the Worker's DEVICE_MALLOC heap of this
    // chip, allocated in the parent), whose bytes live here. Throws
    // std::invalid_argument for a range that overlaps device memory already,
    // std::runtime_error when the device cannot hold it.
    virtual void adopt_range(uint64_t base, uint64_t nbytes) = 0;

    // nbytes from host `src` to device address `dst`, and back. Throws
    // std::invalid_argument when the device range is not inside its memory.
    virtual DeviceEvent copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) = 0;
    virtual DeviceEvent copy_to_host(void* dst, uint64_t src, uint64_t nbytes) = 0;
    // Returns once `event` completed; throws std::runtime_error when it failed.
    virtual void wait(DeviceEvent event) = 0;
    // Returns once everything issued so far completed.
    virtual void synchronize() = 0;

    // Readies kernel `kernel_id` for launch now rather than at its first
    // launch (an OpenCL device builds its program); throws
    // std::runtime_error with the whole reason (a build log does not fit a
    // launch's error).
    virtual void prepare(uint32_t kernel_id) = 0;
    // Runs kernel `kernel_id` on `args` and returns its status: CHIP_OK, or a
    // failure with its message written to args.error.
    virtual int32_t launch(uint32_t kernel_id, const KernelArgs& args) noexcept = 0;
};

}  // namespace simpler::chip
