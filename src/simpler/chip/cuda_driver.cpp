#include "simpler/chip/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace simpler::chip {
namespace {

// SIMPLER_CUDA_LIBRARY when set and not empty, else nullptr.
const char* library_override() noexcept {
    const char* name = std::getenv("SIMPLER_CUDA_LIBRARY");
    return name != nullptr && *name != '\0' ? name : nullptr;
}

}  // namespace

bool cuda_driver_loaded() noexcept {
    const char* name = library_override();
    void* handle = dlopen(name != nullptr ? name : CUDA_DRIVER_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return false;
    dlclose(handle);  // RTLD_NOLOAD took a reference
    return true;
}

std::string cuda_driver_problem() {
    const char* override_name = library_override();
    const bool overridden = override_name != nullptr;
    const std::string name = overridden ? override_name : CUDA_DRIVER_LIBRARY;
    const std::string asked = overridden ? ", as SIMPLER_CUDA_LIBRARY asked" : "";
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return "no CUDA driver: cannot load " + name + " (" + (why != nullptr ? why : "no reason given") +
               "); it was looked for " +
               (name.find('/') != std::string::npos
                    ? std::string("at that path")
                    : std::string("by the dynamic linker (LD_LIBRARY_PATH, /etc/ld.so.cache, /lib, /usr/lib)")) +
               asked +
               ". It comes with the NVIDIA driver (not the CUDA toolkit); set SIMPLER_CUDA_LIBRARY to use "
               "another file";
    }
    const bool found = dlsym(handle, "cuGetProcAddress_v2") != nullptr;
    dlclose(handle);
    if (!found)
        return "no CUDA driver: " + name + (overridden ? " (as SIMPLER_CUDA_LIBRARY asked)" : "") +
               " has no cuGetProcAddress_v2 (it is not the driver library of a CUDA 12 or later driver)";
    return {};
}

}  // namespace simpler::chip
