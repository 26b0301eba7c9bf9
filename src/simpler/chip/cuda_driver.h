// The CUDA libraries as a chip opens them. The driver: libcuda.so.1 (which only the NVIDIA
// driver installs; SIMPLER_CUDA_LIBRARY names another file), loaded at run
// time and never linked, so the project builds and runs where there is none.
// Every entry point of the driver API is bound through cuGetProcAddress_v2 at
// the ABI version the caller compiled against, the one symbol found by name.
//
// Loading it runs the library's constructors: ask in the process that will
// use the device (a chip child after the fork) or a throwaway child
// (engine/device_probe.h), never in a Worker's parent before it forks.
#pragma once

#include <string>

namespace simpler::chip {

// What cuda_driver_problem() opens unless SIMPLER_CUDA_LIBRARY is set.
inline constexpr const char* CUDA_DRIVER_LIBRARY = "libcuda.so.1";

// Opens the driver library, finds cuGetProcAddress_v2 and closes it again.
// Empty when it is there; else what is missing, where it was looked for and
// what to install.
[[nodiscard]] std::string cuda_driver_problem();

// Whether this process has already loaded the driver library (what
// cuda_driver_problem() would open; loading nothing to find out). CUDA's state
// does not survive fork, so a Worker whose chips drive CUDA refuses to fork
// them from such a process.
[[nodiscard]] bool cuda_driver_loaded();

// The NVRTC file a CUDA chip opens when SIMPLER_NVRTC_LIBRARY is not set (a
// path; empty, the default: libnvrtc.so.13 by the dynamic linker). The Python
// package sets it to the nvidia-cuda-nvrtc wheel's file when that is
// installed. Takes effect in the processes that open NVRTC after it: this one
// if it has not yet, and the children forked after it (cuda/nvrtc_api.h).
void set_nvrtc_candidate(std::string path);
[[nodiscard]] std::string nvrtc_candidate();

}  // namespace simpler::chip
