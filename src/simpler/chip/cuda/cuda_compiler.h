// compile_cubin: a kernel source (the standard set's OpenCL C, or a user's
// .cu) compiled by NVRTC (nvrtc_api.h) after the CUDA dialect and the OpenCL
// prelude (cuda_dialect.h) to CUBIN for one GPU architecture (sm_90 on H100
// and H200): machine code for that architecture, never PTX, which a driver
// older than NVRTC would refuse. NVRTC runs on the CPU, so this needs no GPU.
//
// The CUBIN is cached on disk by content: the key hashes the program text,
// the options, NVRTC's version, the architecture and `driver` (the driver's
// version where a device is at hand), so another compiler or GPU never takes
// it. The cache is the private folder cuda/ of the chip cache
// (private_cache.h): a file is loaded only when this user alone may write it;
// a cache that cannot be had or written only costs the next compile.
//
// Host layer: throws std::runtime_error naming `origin` and the architecture,
// with NVRTC's log when the source does not compile, or what is missing when
// there is no NVRTC. Thread-safe.
#pragma once

#include <string>

namespace simpler::chip::cuda {

struct Cubin {
    std::string bytes;        // the CUBIN image, as cuModuleLoadData takes it
    bool from_cache = false;  // read from the chip cache rather than compiled
};

// "sm_90" for compute capability 9.0.
std::string architecture_name(int compute_major, int compute_minor);

Cubin compile_cubin(const std::string& source, const std::string& origin, int compute_major, int compute_minor,
                    const std::string& driver = {});

}  // namespace simpler::chip::cuda
