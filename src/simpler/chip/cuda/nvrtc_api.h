// NvrtcApi: NVRTC, CUDA's run-time compiler, opened at run time and never
// linked (nvrtc.h from the nvidia-cuda-nvrtc wheel gives the types). Which
// file: SIMPLER_NVRTC_LIBRARY when set; else the one the Python package found
// beside it (the nvidia-cuda-nvrtc wheel's: cuda_driver.h,
// set_nvrtc_candidate); else
// libnvrtc.so.13 by the dynamic linker. NVRTC keeps no device state, so any
// process may load it.
//
// nvrtc_api() loads it once per process (thread-safe) and answers the table,
// or throws std::runtime_error naming the file, where it was looked for and
// what to install.
#pragma once

#include <nvrtc.h>

#include <string>

namespace simpler::chip::cuda {

// What nvrtc_api() opens when neither SIMPLER_NVRTC_LIBRARY nor a default is set.
inline constexpr const char* NVRTC_LIBRARY = "libnvrtc.so.13";

struct NvrtcApi {
    std::string library;  // what was loaded (the name dlopen was given)
    int major = 0;        // nvrtcVersion
    int minor = 0;

    decltype(&::nvrtcVersion) Version;
    decltype(&::nvrtcGetErrorString) GetErrorString;
    decltype(&::nvrtcCreateProgram) CreateProgram;
    decltype(&::nvrtcDestroyProgram) DestroyProgram;
    decltype(&::nvrtcCompileProgram) CompileProgram;
    decltype(&::nvrtcGetProgramLogSize) GetProgramLogSize;
    decltype(&::nvrtcGetProgramLog) GetProgramLog;
    decltype(&::nvrtcGetCUBINSize) GetCUBINSize;
    decltype(&::nvrtcGetCUBIN) GetCUBIN;
};

// The loaded table; throws std::runtime_error (the same message every call)
// when NVRTC cannot be loaded or lacks an entry point.
const NvrtcApi& nvrtc_api();

}  // namespace simpler::chip::cuda
