#include "simpler/chip/cuda/cuda_api.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/runtime_library.h"

namespace simpler::chip::cuda {
namespace {

struct Loaded {
    CudaApi api{};
    std::string error;  // non-empty: loading failed, and why
};

// Asks the driver for `symbol` at ABI `version` (the PFN typedef's suffix);
// the first entry point that fails is described in `missing`.
template <typename Fn>
void bind(PFN_cuGetProcAddress_v12000 get, const char* symbol, int version, Fn& out, std::string& missing) {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    const CUresult rc = get(symbol, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    out = reinterpret_cast<Fn>(pfn);
    if ((rc == CUDA_SUCCESS && pfn != nullptr) || !missing.empty()) return;
    missing =
        std::string(symbol) + " at ABI version " + std::to_string(version) + " (" +
        (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? std::string("its entry point is newer than that ABI")
         : status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
             ? "no such entry point: a driver older than CUDA " + cuda_version_text(version) + "?"
             : "cuGetProcAddress_v2 answered CUresult " + std::to_string(static_cast<int>(rc))) +
        ")";
    out = nullptr;
}

#define SIMPLER_CU_BIND(field, symbol, version) bind(get, #symbol, version, a.field, missing)

Loaded load() {
    Loaded l;
    const RuntimeLibrary lib = choose_runtime_library("SIMPLER_CUDA_LIBRARY", CUDA_DRIVER_LIBRARY);
    void* handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto get = handle == nullptr ? nullptr
                                 : reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
    if (get == nullptr) {  // cuda_driver_problem() opens it again to say what is wrong
        if (handle != nullptr) dlclose(handle);
        const std::string problem = cuda_driver_problem();
        l.error = problem.empty() ? "no CUDA driver: " + lib.name + " could not be loaded a moment ago" : problem;
        return l;
    }
    CudaApi& a = l.api;
    a.library = lib.name;
    std::string missing;
    SIMPLER_CU_BIND(GetErrorName, cuGetErrorName, 6000);
    SIMPLER_CU_BIND(GetErrorString, cuGetErrorString, 6000);
    SIMPLER_CU_BIND(Init, cuInit, 2000);
    SIMPLER_CU_BIND(DriverGetVersion, cuDriverGetVersion, 2020);
    SIMPLER_CU_BIND(DeviceGetCount, cuDeviceGetCount, 2000);
    SIMPLER_CU_BIND(DeviceGet, cuDeviceGet, 2000);
    SIMPLER_CU_BIND(DeviceGetName, cuDeviceGetName, 2000);
    SIMPLER_CU_BIND(DeviceGetUuid, cuDeviceGetUuid, 11040);
    SIMPLER_CU_BIND(DeviceTotalMem, cuDeviceTotalMem, 3020);
    SIMPLER_CU_BIND(DeviceGetAttribute, cuDeviceGetAttribute, 2000);
    SIMPLER_CU_BIND(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000);
    SIMPLER_CU_BIND(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000);
    SIMPLER_CU_BIND(CtxSetCurrent, cuCtxSetCurrent, 4000);
    SIMPLER_CU_BIND(MemAlloc, cuMemAlloc, 3020);
    SIMPLER_CU_BIND(MemFree, cuMemFree, 3020);
    SIMPLER_CU_BIND(MemcpyHtoDAsync, cuMemcpyHtoDAsync, 3020);
    SIMPLER_CU_BIND(MemcpyDtoHAsync, cuMemcpyDtoHAsync, 3020);
    SIMPLER_CU_BIND(StreamCreate, cuStreamCreate, 2000);
    SIMPLER_CU_BIND(StreamDestroy, cuStreamDestroy, 4000);
    SIMPLER_CU_BIND(StreamSynchronize, cuStreamSynchronize, 2000);
    SIMPLER_CU_BIND(EventCreate, cuEventCreate, 2000);
    SIMPLER_CU_BIND(EventRecord, cuEventRecord, 2000);
    SIMPLER_CU_BIND(EventSynchronize, cuEventSynchronize, 2000);
    SIMPLER_CU_BIND(EventDestroy, cuEventDestroy, 4000);
    SIMPLER_CU_BIND(ModuleLoadData, cuModuleLoadData, 2000);
    SIMPLER_CU_BIND(ModuleUnload, cuModuleUnload, 2000);
    SIMPLER_CU_BIND(ModuleGetFunction, cuModuleGetFunction, 2000);
    SIMPLER_CU_BIND(LaunchKernel, cuLaunchKernel, 4000);
    if (!missing.empty()) {
        l.error = "CUDA: the driver " + lib.name + " has no " + missing;
        dlclose(handle);
        return l;
    }
    if (const CUresult rc = a.DriverGetVersion(&a.driver_version); rc != CUDA_SUCCESS) {
        l.error = "CUDA: cuDriverGetVersion of " + lib.name + " failed: " + cu_error_name(a, rc);
        dlclose(handle);
    }
    // Otherwise the driver stays loaded for the process's lifetime.
    return l;
}

#undef SIMPLER_CU_BIND

}  // namespace

const CudaApi& cuda_api() {
    // One table per file asked for: a process keeps SIMPLER_CUDA_LIBRARY as it is, and a test that
    // names another file gets that one.
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<const Loaded>> loaded;
    const std::lock_guard<std::mutex> lock(mu);
    std::unique_ptr<const Loaded>& l = loaded[choose_runtime_library("SIMPLER_CUDA_LIBRARY", CUDA_DRIVER_LIBRARY).name];
    if (!l) l = std::make_unique<const Loaded>(load());
    if (!l->error.empty()) throw std::runtime_error(l->error);
    return l->api;
}

std::string cu_error_name(const CudaApi& api, CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api.GetErrorName == nullptr || api.GetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr)
        return "CUresult " + std::to_string(static_cast<int>(result));
    if (api.GetErrorString == nullptr || api.GetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr ||
        std::string_view(text) == name)
        return name;
    return std::string(name) + " (" + text + ")";
}

bool cu_error_is_sticky(CUresult result) noexcept {
    switch (result) {
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_ASSERT:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        case CUDA_ERROR_UNKNOWN: return true;
        default: return false;
    }
}

std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace simpler::chip::cuda
