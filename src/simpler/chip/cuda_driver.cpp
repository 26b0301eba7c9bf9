#include "simpler/chip/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <utility>

#include "simpler/chip/runtime_library.h"

namespace simpler::chip {
namespace {

std::mutex nvrtc_default_mutex;
std::string& nvrtc_default() {
    static std::string path;
    return path;
}

RuntimeLibrary driver_library() { return choose_runtime_library("SIMPLER_CUDA_LIBRARY", CUDA_DRIVER_LIBRARY); }

}  // namespace

bool cuda_driver_loaded() {
    void* handle = dlopen(driver_library().name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return false;
    dlclose(handle);  // RTLD_NOLOAD took a reference
    return true;
}

std::string cuda_driver_problem() {
    const RuntimeLibrary lib = driver_library();
    void* handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
        return "no CUDA driver: cannot load " + runtime_library_not_loaded(lib, dlerror()) +
               ". It comes with the NVIDIA driver (not the CUDA toolkit); set SIMPLER_CUDA_LIBRARY to use another "
               "file";
    const bool found = dlsym(handle, "cuGetProcAddress_v2") != nullptr;
    dlclose(handle);
    if (!found)
        return "no CUDA driver: " + lib.name + (lib.overridden ? " (as SIMPLER_CUDA_LIBRARY asked)" : "") +
               " has no cuGetProcAddress_v2 (it is not the driver library of a CUDA 12 or later driver)";
    return {};
}

void set_nvrtc_candidate(std::string path) {
    const std::lock_guard<std::mutex> lock(nvrtc_default_mutex);
    nvrtc_default() = std::move(path);
}

std::string nvrtc_candidate() {
    const std::lock_guard<std::mutex> lock(nvrtc_default_mutex);
    return nvrtc_default();
}

}  // namespace simpler::chip
