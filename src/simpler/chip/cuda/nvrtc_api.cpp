#include "simpler/chip/cuda/nvrtc_api.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/runtime_library.h"

namespace simpler::chip::cuda {
namespace {

struct Loaded {
    NvrtcApi api{};
    std::string error;  // non-empty: loading failed, and why
};

Loaded load() {
    Loaded l;
    const std::string fallback = nvrtc_candidate();
    const RuntimeLibrary lib =
        choose_runtime_library("SIMPLER_NVRTC_LIBRARY", fallback.empty() ? NVRTC_LIBRARY : fallback.c_str());
    void* handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        l.error = "no NVRTC (CUDA's run-time compiler, which builds the kernels of CUDA chips): cannot load " +
                  runtime_library_not_loaded(lib, dlerror()) +
                  ". Install it into the Python environment (pip install nvidia-cuda-nvrtc==13.*: simpler finds "
                  "it there) or set SIMPLER_NVRTC_LIBRARY to the file";
        return l;
    }
    NvrtcApi& a = l.api;
    a.library = lib.name;
    std::string missing;
    bind_entry_point(handle, "nvrtcVersion", a.Version, missing);
    bind_entry_point(handle, "nvrtcGetErrorString", a.GetErrorString, missing);
    bind_entry_point(handle, "nvrtcCreateProgram", a.CreateProgram, missing);
    bind_entry_point(handle, "nvrtcDestroyProgram", a.DestroyProgram, missing);
    bind_entry_point(handle, "nvrtcCompileProgram", a.CompileProgram, missing);
    bind_entry_point(handle, "nvrtcGetProgramLogSize", a.GetProgramLogSize, missing);
    bind_entry_point(handle, "nvrtcGetProgramLog", a.GetProgramLog, missing);
    bind_entry_point(handle, "nvrtcGetCUBINSize", a.GetCUBINSize, missing);
    bind_entry_point(handle, "nvrtcGetCUBIN", a.GetCUBIN, missing);
    if (missing.empty() && a.Version(&a.major, &a.minor) != NVRTC_SUCCESS) missing = "a working nvrtcVersion";
    if (!missing.empty()) {
        l.error = "no NVRTC: " + lib.name + " has no " + missing + " (it is not CUDA's NVRTC)";
        dlclose(handle);
        return l;
    }
    // Otherwise NVRTC stays loaded for the process's lifetime, and so does its
    // builtins library: NVRTC opens it by name at its first compile, found
    // through NVRTC's own RUNPATH, which a dlopen interposed by a sanitizer
    // does not see. Loaded from beside NVRTC first, the name finds it loaded.
    Dl_info where{};
    if (dladdr(reinterpret_cast<void*>(a.Version), &where) != 0 && where.dli_fname != nullptr) {
        const std::string path = where.dli_fname;
        const std::string builtins = path.substr(0, path.rfind('/') + 1) + "libnvrtc-builtins.so." +
                                     std::to_string(a.major) + "." + std::to_string(a.minor);
        if (path.find('/') != std::string::npos) (void)dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    return l;
}

}  // namespace

const NvrtcApi& nvrtc_api() {
    static const Loaded loaded = load();
    if (!loaded.error.empty()) throw std::runtime_error(loaded.error);
    return loaded.api;
}

}  // namespace simpler::chip::cuda
