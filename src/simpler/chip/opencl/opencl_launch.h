// KernelLaunch: one launch of an OpenCL kernel on an OpenClDevice — its
// arguments set in order (a tensor as its buffer and simpler_view,
// clc/clc_view.h; a device block as its buffer and element base; a scalar as a
// ulong) and the launch enqueued while the program's kernel lock is held,
// then waited for after releasing it (a cl_kernel's arguments are shared by
// every thread that launches it).
//
// launch_source_kernel() runs an OpenCL C kernel of a user's source
// (opencl_source.h) on a task's arguments: every tensor, then every scalar,
// one work item per element of the last tensor (one work item when there is
// no tensor).
//
// Host layer: the setters and run() throw std::runtime_error naming the
// argument, the kernel and the OpenCL error by name; launch_source_kernel()
// is noexcept and reports through KernelArgs::error.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "simpler/chip/kernel_api.h"
#include "simpler/chip/kernel_device.h"
#include "simpler/chip/opencl/opencl_api.h"

namespace simpler::chip::opencl {

class OpenClDevice;
class OpenClProgram;

class KernelLaunch final : public ClcLaunch {
public:
    // Takes the program's kernel lock and the kernel `kernel` (made once).
    KernelLaunch(OpenClDevice& device, OpenClProgram& program, const std::string& kernel);
    // Releases the host backings' wrappings (OpenClDevice::wrap_host) if run() did not.
    ~KernelLaunch() override;
    KernelLaunch(const KernelLaunch&) = delete;
    KernelLaunch& operator=(const KernelLaunch&) = delete;

    // The tensor's buffer and view: device memory of the chip, or (a zero-copy
    // run on a device that shares host memory) its host backing, wrapped for this launch.
    ClcLaunch& tensor(const Tensor& t) override;
    ClcLaunch& buffer(uint64_t addr, uint64_t nbytes, uint64_t element_size) override;
    ClcLaunch& scalar(uint64_t s) override;
    // Enqueues over `global` work items in `dims` dimensions (in groups of
    // `local` when given), releases the lock, waits for the kernel and hands
    // its host backings back to the host (OpenClDevice::unwrap_host).
    void run(uint32_t dims, const size_t* global, const size_t* local = nullptr) override;

private:
    ClcLaunch& arg(size_t size, const void* value);

    OpenClDevice& device_;
    std::string name_;
    std::unique_lock<std::mutex> lock_;
    cl_kernel kernel_;
    cl_uint index_ = 0;
    std::vector<std::pair<cl_mem, uint64_t>> host_buffers_;  // wrapped host backings and their sizes
};

// Runs kernel `name` of `program` on `args` (see above).
int32_t launch_source_kernel(OpenClDevice& device, OpenClProgram& program, const std::string& name,
                             const KernelArgs& args) noexcept;

}  // namespace simpler::chip::opencl
