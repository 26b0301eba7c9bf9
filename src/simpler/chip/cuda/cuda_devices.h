// The CUDA devices of this machine, as the driver reports them (cuInit, then
// each ordinal's name, UUID, memory and attributes), and the filter a
// DeviceChoice's platform applies to them: a part of the device's name (any
// case) or the beginning of its UUID ("GPU-8f3a", or "8f3a").
//
// Host layer: find_cuda_devices() throws std::runtime_error when the driver
// cannot be loaded (cuda_api.h), when cuInit or a query fails (naming the
// CUresult), when it reports no device, or when none matches the filter
// (naming those found).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simpler/chip/device.h"

namespace simpler::chip::cuda {

struct CudaDeviceInfo {
    int ordinal = 0;              // the driver's device number
    std::string name;             // cuDeviceGetName
    std::string uuid;             // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi writes it
    uint64_t memory = 0;          // cuDeviceTotalMem, bytes
    uint32_t multiprocessors = 0; // SMs
    int compute_major = 0;        // compute capability: 9.0 on H100 and H200
    int compute_minor = 0;
    bool integrated = false;  // shares the host's memory (Jetson, ...)
};

// "GPU-" and the 16 bytes as 8-4-4-4-12 lower-case hex digits.
std::string uuid_text(const unsigned char (&bytes)[16]);

// Whether `filter` picks `device`: empty; a part of its name, any case; or the
// beginning of its UUID, with or without "GPU-", any case.
bool device_matches(const CudaDeviceInfo& device, const std::string& filter);

// The DeviceFacts of `device` under a driver of `driver_version`: "NVIDIA
// CUDA", the name and UUID, "CUDA 13.0 driver, compute capability 9.0", its
// memory, its multiprocessors as compute units; one kernel at a time (one
// stream a chip) and no host memory in place (every CUDA device stages
// through copies, an integrated one too).
DeviceFacts cuda_facts(const CudaDeviceInfo& device, int driver_version);

// Every device the driver reports that `filter` picks, in ordinal order.
std::vector<CudaDeviceInfo> find_cuda_devices(const std::string& filter);

}  // namespace simpler::chip::cuda
