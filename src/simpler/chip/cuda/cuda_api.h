// CudaApi: the CUDA driver API's entry points, bound at run time from the
// driver library (cuda_driver.h: libcuda.so.1, or what SIMPLER_CUDA_LIBRARY
// names). Only cuGetProcAddress_v2 is found by name; every other entry point
// is asked of it at the ABI version of the typedef this file compiled against
// (cudaTypedefs.h's PFN_<name>_v<version>), so a driver newer than the headers
// still hands out the ABI this code calls (cuda.h renames cuDeviceTotalMem to
// cuDeviceTotalMem_v2; a plain dlsym would bind the old one).
//
// cuda_api() loads the driver once per process (thread-safe; once per file,
// should SIMPLER_CUDA_LIBRARY change) and answers the table, or throws std::runtime_error naming the library, the entry
// point and the ABI version it lacks. Load it only in the process that drives the device: a chip child after the fork,
// or a throwaway child (engine/device_probe.h).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace simpler::chip::cuda {

struct CudaApi {
    std::string library;  // what was loaded (the name dlopen was given)
    int driver_version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor (13000 for 13.0)

    PFN_cuGetErrorName_v6000 GetErrorName;
    PFN_cuGetErrorString_v6000 GetErrorString;
    PFN_cuInit_v2000 Init;
    PFN_cuDriverGetVersion_v2020 DriverGetVersion;
    PFN_cuDeviceGetCount_v2000 DeviceGetCount;
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDeviceGetName_v2000 DeviceGetName;
    PFN_cuDeviceGetUuid_v11040 DeviceGetUuid;
    PFN_cuDeviceTotalMem_v3020 DeviceTotalMem;
    PFN_cuDeviceGetAttribute_v2000 DeviceGetAttribute;
    PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
    PFN_cuDevicePrimaryCtxRelease_v11000 DevicePrimaryCtxRelease;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuMemAlloc_v3020 MemAlloc;
    PFN_cuMemFree_v3020 MemFree;
    PFN_cuMemcpyHtoDAsync_v3020 MemcpyHtoDAsync;
    PFN_cuMemcpyDtoHAsync_v3020 MemcpyDtoHAsync;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamDestroy_v4000 StreamDestroy;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    PFN_cuEventCreate_v2000 EventCreate;
    PFN_cuEventRecord_v2000 EventRecord;
    PFN_cuEventSynchronize_v2000 EventSynchronize;
    PFN_cuEventDestroy_v4000 EventDestroy;
    PFN_cuModuleLoadData_v2000 ModuleLoadData;
    PFN_cuModuleUnload_v2000 ModuleUnload;
    PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
    PFN_cuLaunchKernel_v4000 LaunchKernel;
};

// The loaded table; throws std::runtime_error (the same message every call)
// when the driver cannot be loaded or lacks an entry point at its version.
const CudaApi& cuda_api();

// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", as the loaded
// driver names `result`; "CUresult <n>" when it names no such code.
std::string cu_error_name(const CudaApi& api, CUresult result);

// True for a CUresult after which the context is unusable (an illegal address,
// a kernel's trap or assert, a hardware error): every later call fails, so a
// device that saw one is lost.
bool cu_error_is_sticky(CUresult result) noexcept;

// "13.0" for a cuDriverGetVersion of 13000.
std::string cuda_version_text(int version);

}  // namespace simpler::chip::cuda
