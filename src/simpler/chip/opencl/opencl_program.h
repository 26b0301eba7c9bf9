// OpenClProgram: OpenCL C source (after CLC_PRELUDE, clc/clc_view.h) built
// for one device of a context, and its kernels by name.
//
// The built binary is cached on disk by content: the key hashes the prelude,
// the source, the build options, and the device's platform, name, version and
// driver version, so another device or driver never takes it. A cached binary
// that the driver refuses is rebuilt from source. The cache is the private
// folder opencl/ of the chip cache (private_cache.h): a binary is loaded only
// when this user alone may write it; a cache that cannot be had or written
// only costs the next build.
//
// Owns the program and the kernels it made. kernel() is thread-safe (a
// mutex); a cl_kernel's arguments are not, so a caller that sets them holds
// kernel_lock() until the launch is enqueued. Host layer: the constructor
// throws std::runtime_error naming `origin`, the device and the OpenCL error
// by name, with the build log when the build fails; kernel() throws naming
// the kernel.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "simpler/chip/opencl/opencl_api.h"

namespace simpler::chip::opencl {

class OpenClProgram {
public:
    OpenClProgram(cl_context context, cl_device_id device, const std::string& source, const std::string& origin);
    ~OpenClProgram();
    OpenClProgram(const OpenClProgram&) = delete;
    OpenClProgram& operator=(const OpenClProgram&) = delete;

    // The kernel `name` of this program (made once).
    cl_kernel kernel(const std::string& name);
    // Held while a kernel's arguments are set and its launch enqueued.
    [[nodiscard]] std::mutex& kernel_lock() noexcept { return launch_mu_; }
    // Whether the binary came from the cache.
    [[nodiscard]] bool from_cache() const noexcept { return from_cache_; }
    [[nodiscard]] const std::string& origin() const noexcept { return origin_; }

private:
    const OpenClApi& cl_;
    std::string origin_;
    std::string device_name_;
    cl_program program_ = nullptr;
    bool from_cache_ = false;
    std::mutex mu_;
    std::map<std::string, cl_kernel> kernels_;
    std::mutex launch_mu_;
};

}  // namespace simpler::chip::opencl
