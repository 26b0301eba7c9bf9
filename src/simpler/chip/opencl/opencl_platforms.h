// The OpenCL devices of this machine: every device of every platform the ICD
// loader reports, with the facts a chip needs to choose one and to size its
// memory.
//
// Host layer: find_opencl_devices() throws std::runtime_error when the loader
// cannot be loaded (opencl_api.h), when it reports no platform (naming where it
// read its drivers from: OCL_ICD_VENDORS, else /etc/OpenCL/vendors), when no
// platform's name contains the filter (naming those found), or when the
// platforms have no device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simpler/chip/opencl/opencl_api.h"

namespace simpler::chip::opencl {

struct OpenClDeviceInfo {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    std::string platform_name;
    std::string name;
    std::string version;         // CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...")
    uint64_t global_memory = 0;  // bytes
    uint64_t max_allocation = 0; // the largest one buffer may be
    uint32_t compute_units = 0;
    bool unified_host_memory = false;
    bool fp64 = false;  // double precision (CL_DEVICE_DOUBLE_FP_CONFIG non-zero: cl_khr_fp64)
};

// A text fact of a platform or a device (CL_PLATFORM_NAME, CL_DEVICE_VERSION,
// ...); empty when the driver gives none. The loader must be loaded.
std::string platform_text(cl_platform_id platform, cl_platform_info what);
std::string device_text(cl_device_id device, cl_device_info what);

// Every device of every platform whose name contains `platform_filter`
// (case-insensitive; empty: every platform), in the loader's platform order
// and each platform's device order.
std::vector<OpenClDeviceInfo> find_opencl_devices(const std::string& platform_filter);

}  // namespace simpler::chip::opencl
