// The devices of this machine a chip may drive: what a DeviceChoice finds
// (find_devices) and opening the one a chip gets (open_device). The one place
// that names every DeviceKind's implementation.
//
// An OpenCL device is opened where the OpenCL implementation may start
// threads, so call both in the process that will use the device (a chip
// child after the fork); a parent asks a throwaway child
// (engine/device_probe.h). Host layer: both throw std::runtime_error naming
// what is missing (no OpenCL loader, platform or device; a build without the
// OpenCL headers; a CUDA device, which this version does not run chips on),
// std::invalid_argument for an unknown kind.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/simulated_device.h"

namespace simpler::chip {

// True when this build drives OpenCL devices (it found the OpenCL headers).
bool opencl_built() noexcept;

// True when this build knows CUDA devices (it found the CUDA headers, cuda.h):
// find_devices lists them (cuda/cuda_devices.h); open_device refuses them, as
// this version runs no chip on one. Without the headers both refuse a CUDA
// choice saying so, and what else is missing here (cuda_driver.h: no driver
// library).
bool cuda_built() noexcept;

// Throws std::runtime_error, saying why, when this version runs no chip on a
// device of `kind` though find_devices may list them (CUDA); a Worker asks at
// init(), so chips are never forked only to fail opening their device.
void require_chips_run_on(DeviceKind kind);

// NVRTC's (major, minor) as the file a CUDA chip would open reports it
// (cuda/nvrtc_api.h); std::runtime_error saying what to install when there is
// none, or that this build knows no CUDA.
std::pair<int, int> nvrtc_version();

// Every device `choice` may open, in the order choice.index counts them (a
// simulated choice finds the one simulated device).
std::vector<DeviceFacts> find_devices(const DeviceChoice& choice);

// The device `choice` names, for a chip whose kernels `registry` holds;
// `simulated` sizes the simulated device, and its memory_bytes every other
// device's memory.
std::unique_ptr<Device> open_device(const DeviceChoice& choice, const KernelRegistry& registry,
                                    const SimulatedDeviceOptions& simulated);

}  // namespace simpler::chip
