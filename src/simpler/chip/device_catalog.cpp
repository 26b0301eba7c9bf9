#include "simpler/chip/device_catalog.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/chip/cuda_driver.h"

#if SIMPLER_HAVE_CUDA
#include "simpler/chip/cuda/cuda_api.h"
#include "simpler/chip/cuda/cuda_devices.h"
#include "simpler/chip/cuda/nvrtc_api.h"
#endif
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

#if SIMPLER_HAVE_CUDA
// CUDA devices are found and described, but no chip runs on one yet.
[[noreturn]] void cuda_chips_not_run() {
    throw std::runtime_error(
        "CUDA: this version of simpler finds CUDA devices (python -m simpler devices lists them) but runs no chip "
        "on one yet; NVIDIA GPUs run chips through their OpenCL driver: Worker(device=\"opencl\")");
}
#else
// This build has no CUDA device; what a CUDA chip would also need on this
// machine is said beside it, so one answer tells everything that is missing.
[[noreturn]] void cuda_not_built() {
    const std::string driver = cuda_driver_problem();
    throw std::runtime_error(
        "CUDA: this build of simpler drives no CUDA devices (the CUDA headers, cuda.h, were not found when it was "
        "built: ./dev installs them, pip install nvidia-cuda-runtime; NVIDIA GPUs run chips through their OpenCL "
        "driver: Worker(device=\"opencl\")); on this machine: " +
        (driver.empty() ? std::string("the CUDA driver is there") : driver));
}
#endif

#if !SIMPLER_HAVE_OPENCL
[[noreturn]] void opencl_not_built() {
    throw std::runtime_error(
        "OpenCL: this build of simpler drives no OpenCL devices (the OpenCL headers, CL/cl.h, were not found when "
        "it was built; Debian/Ubuntu: opencl-headers); rebuild with them installed");
}
#endif

// A chip on a CUDA device: refused, saying why.
[[noreturn]] void cuda_chips_refused() {
#if SIMPLER_HAVE_CUDA
    cuda_chips_not_run();
#else
    cuda_not_built();
#endif
}

}  // namespace

bool opencl_built() noexcept { return SIMPLER_HAVE_OPENCL != 0; }

bool cuda_built() noexcept { return SIMPLER_HAVE_CUDA != 0; }

void require_chips_run_on(DeviceKind kind) {
    if (kind == DeviceKind::CUDA) cuda_chips_refused();
}

std::pair<int, int> nvrtc_version() {
#if SIMPLER_HAVE_CUDA
    const cuda::NvrtcApi& nvrtc = cuda::nvrtc_api();
    return {nvrtc.major, nvrtc.minor};
#else
    cuda_not_built();
#endif
}

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
        case DeviceKind::CUDA: {
#if SIMPLER_HAVE_CUDA
            std::vector<DeviceFacts> out;
            for (const cuda::CudaDeviceInfo& d : cuda::find_cuda_devices(choice.platform))
                out.push_back(cuda::cuda_facts(d, cuda::cuda_api().driver_version));
            return out;
#else
            cuda_not_built();
#endif
        }
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
        case DeviceKind::CUDA: cuda_chips_refused();
    }
    unknown_kind(choice.kind);
}

}  // namespace simpler::chip
