#include "simpler/chip/simulated_device.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "simpler/chip/status.h"

namespace simpler::chip {

SimulatedDevice::SimulatedDevice(const KernelRegistry& kernels, SimulatedDeviceOptions options)
    : kernels_(kernels), arena_(options.memory_bytes), host_addressable_(options.host_addressable) {
    facts_.kind = DeviceKind::SIMULATED;
    facts_.platform = "simpler";
    facts_.name = host_addressable_ ? "simulated chip" : "simulated chip (discrete memory)";
    facts_.memory_bytes = arena_.capacity();
    facts_.compute_units = options.compute_units;
    facts_.unified_host_memory = host_addressable_;
}

uint64_t SimulatedDevice::alloc(uint64_t nbytes, uint64_t alignment) {
    return reinterpret_cast<uint64_t>(arena_.alloc(nbytes, alignment));
}

uint64_t SimulatedDevice::try_alloc(uint64_t nbytes, uint64_t alignment) noexcept {
    return arena_.try_alloc(nbytes, alignment);
}

bool SimulatedDevice::try_free(uint64_t addr) noexcept { return arena_.try_free(addr); }

bool SimulatedDevice::contains(uint64_t addr, uint64_t nbytes) const noexcept {
    if (arena_.contains(addr, nbytes)) return true;
    for (const DeviceRange& r : adopted_)
        if (r.holds(addr, nbytes)) return true;
    return false;
}

void* SimulatedDevice::host_address(uint64_t addr) const noexcept {
    return host_addressable_ && contains(addr) ? reinterpret_cast<void*>(addr) : nullptr;
}

void SimulatedDevice::adopt_range(uint64_t base, uint64_t nbytes) {
    bool overlaps =
        nbytes == 0 || base + nbytes < base || DeviceRange{arena_.base(), arena_.capacity()}.overlaps(base, nbytes);
    for (const DeviceRange& r : adopted_) overlaps = overlaps || r.overlaps(base, nbytes);
    if (overlaps) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "adopt_range: 0x%llx + %llu bytes is empty or overlaps memory of %s",
                      static_cast<unsigned long long>(base), static_cast<unsigned long long>(nbytes),
                      facts_.name.c_str());
        throw std::invalid_argument(msg);
    }
    adopted_.push_back({base, nbytes});
}

void SimulatedDevice::check_range(const char* what, uint64_t addr, uint64_t nbytes) const {
    if (nbytes == 0 || contains(addr, nbytes)) return;
    char msg[160];
    std::snprintf(msg, sizeof msg, "%s: device range 0x%llx + %llu bytes is not inside %s's memory", what,
                  static_cast<unsigned long long>(addr), static_cast<unsigned long long>(nbytes), facts_.name.c_str());
    throw std::invalid_argument(msg);
}

DeviceEvent SimulatedDevice::copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) {
    check_range("copy_to_device", dst, nbytes);
    if (nbytes > 0) std::memcpy(reinterpret_cast<void*>(dst), src, nbytes);
    return 0;
}

DeviceEvent SimulatedDevice::copy_to_host(void* dst, uint64_t src, uint64_t nbytes) {
    check_range("copy_to_host", src, nbytes);
    if (nbytes > 0) std::memcpy(dst, reinterpret_cast<const void*>(src), nbytes);
    return 0;
}

int32_t SimulatedDevice::launch(uint32_t kernel_id, const KernelArgs& args) noexcept {
    const KernelFn fn = kernels_.kernel(kernel_id);
    if (fn == nullptr) return kernel_fail(&args, "no kernel has id %u on %s", kernel_id, facts_.name.c_str());
    try {
        return fn(&args);
    } catch (const std::exception& e) {
        return kernel_fail(&args, "threw: %s", e.what());
    } catch (...) {
        return kernel_fail(&args, "threw a non-standard exception");
    }
}

}  // namespace simpler::chip
