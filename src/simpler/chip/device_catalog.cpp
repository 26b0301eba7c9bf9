#include "simpler/chip/device_catalog.h"

#include <stdexcept>
#include <string>

#include "simpler/chip/cuda_driver.h"

#if SIMPLER_HAVE_OPENCL
#include "simpler/chip/opencl/opencl_device.h"
#include "simpler/chip/opencl/opencl_platforms.h"
#endif

namespace simpler::chip {
namespace {

[[noreturn]] void unknown_kind(DeviceKind kind) {
    throw std::invalid_argument("device kind " + std::to_string(static_cast<int>(kind)) +
                                " is not one of simulated, opencl, cuda");
}

// This build has no CUDA device; what a CUDA chip would also need on this
// machine is said beside it, so one answer tells everything that is missing.
[[noreturn]] void cuda_not_built() {
    const std::string driver = cuda_driver_problem();
    throw std::runtime_error(
        "CUDA: this build of simpler drives no CUDA devices (NVIDIA GPUs run chips through their OpenCL driver: "
        "Worker(device=\"opencl\")); on this machine: " +
        (driver.empty() ? std::string("the CUDA driver is there") : driver));
}

#if !SIMPLER_HAVE_OPENCL
[[noreturn]] void opencl_not_built() {
    throw std::runtime_error(
        "OpenCL: this build of simpler drives no OpenCL devices (the OpenCL headers, CL/cl.h, were not found when "
        "it was built; Debian/Ubuntu: opencl-headers); rebuild with them installed");
}
#endif

}  // namespace

bool opencl_built() noexcept { return SIMPLER_HAVE_OPENCL != 0; }

bool cuda_built() noexcept { return false; }

std::vector<DeviceFacts> find_devices(const DeviceChoice& choice) {
    switch (choice.kind) {
        case DeviceKind::SIMULATED: {
            DeviceFacts f;
            f.platform = "simpler";
            f.name = "simulated chip";
            f.unified_host_memory = true;
            return {f};
        }
        case DeviceKind::OPENCL: {
#if SIMPLER_HAVE_OPENCL
            std::vector<DeviceFacts> out;
            for (const opencl::OpenClDeviceInfo& d : opencl::find_opencl_devices(choice.platform)) {
                DeviceFacts f;
                f.kind = DeviceKind::OPENCL;
                f.platform = d.platform_name;
                f.name = d.name;
                f.version = d.version;
                f.memory_bytes = d.global_memory;
                f.compute_units = d.compute_units;
                f.concurrent_kernels = 1;  // as the opened device says: one in-order queue
                f.unified_host_memory = d.unified_host_memory;  // as the opened device says (zero-copy runs)
                out.push_back(std::move(f));
            }
            return out;
#else
            opencl_not_built();
#endif
        }
        case DeviceKind::CUDA: cuda_not_built();
    }
    unknown_kind(choice.kind);
}

std::unique_ptr<Device> open_device(const DeviceChoice& choice, const KernelRegistry& registry,
                                    const SimulatedDeviceOptions& simulated) {
    switch (choice.kind) {
        case DeviceKind::SIMULATED: return std::make_unique<SimulatedDevice>(registry, simulated);
        case DeviceKind::OPENCL:
#if SIMPLER_HAVE_OPENCL
            return std::make_unique<opencl::OpenClDevice>(registry, choice, simulated.memory_bytes);
#else
            opencl_not_built();
#endif
        case DeviceKind::CUDA: cuda_not_built();
    }
    unknown_kind(choice.kind);
}

}  // namespace simpler::chip
