// OpenClDevice: a chip's device driven through OpenCL 1.2 (opencl_api.h: the
// ICD loader found at run time) — one device of one platform, its context and
// an in-order command queue, made in the chip process (after the fork).
//
// Device memory is one cl_mem of the chip's memory size (no larger than the
// device lets one buffer be), behind the addresses of a DeviceRegions
// (device_regions.h), which resolves each to (the cl_mem, offset). A range
// adopted with adopt_range (the Worker's DEVICE_MALLOC heap of this chip,
// allocated by the parent) gets a cl_mem of its own, resolved the same way. host_address() is always nullptr:
// bytes move only by copies (clEnqueueWriteBuffer / clEnqueueReadBuffer,
// non-blocking, each an event of the queue).
//
// On a device that shares host memory (CL_DEVICE_HOST_UNIFIED_MEMORY: PoCL's
// CPU device, integrated GPUs) a zero-copy run's kernels work on the host
// backings in place: each launch wraps each host backing it names in a
// CL_MEM_USE_HOST_PTR buffer (wrap_host), and after the kernel maps and unmaps
// it (which makes what the kernel wrote visible to the host on any driver) and
// releases it, so no wrapping outlives a launch and a forgotten backing leaves
// nothing on the device.
//
// launch() runs the standard kernels in OpenCL C (clc/clc_std_kernels.h) and
// the kernels of OpenCL C sources the registry keeps (opencl_source.h,
// opencl_launch.h), each program built at its first launch (its binary
// cached: opencl_program.h), each launch enqueued on the same queue and
// waited for. A kernel with no OpenCL form (a C++ kernel of a user library)
// fails naming the kernel and the device.
//
// Owns the context, the queue, the buffers and the events it hands out (those
// never waited for are released by synchronize() and the destructor). Thread-
// safe: the OpenCL calls are, and the event table has its own mutex. Host
// layer: the constructor and the copies throw std::runtime_error naming the
// device and the OpenCL error by name, std::invalid_argument for a range that
// is not device memory of this device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/chip/device_arena.h"
#include "simpler/chip/kernel_device.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/opencl/opencl_api.h"
#include "simpler/chip/opencl/opencl_platforms.h"
#include "simpler/chip/opencl/opencl_program.h"
#include "simpler/chip/region_device.h"

namespace simpler::chip::opencl {

class OpenClDevice final : public RegionDevice<cl_mem> {
public:
    // Opens device choice.index modulo the devices find_opencl_devices(choice.platform) finds.
    OpenClDevice(const KernelRegistry& kernels, const DeviceChoice& choice, uint64_t memory_bytes);
    ~OpenClDevice() override;

    [[nodiscard]] const DeviceFacts& facts() const noexcept override { return facts_; }

    DeviceEvent copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) override;
    DeviceEvent copy_to_host(void* dst, uint64_t src, uint64_t nbytes) override;
    void wait(DeviceEvent event) override;
    void synchronize() override;

    // Builds the program of an OpenCL C kernel (the standard set's or a source's); nothing for another kernel.
    void prepare(uint32_t kernel_id) override;
    int32_t launch(uint32_t kernel_id, const KernelArgs& args) noexcept override;

    // The standard kernels' program (clc/clc_std_kernels.h), built at its first use.
    OpenClProgram& std_program();
    std::unique_ptr<ClcLaunch> std_launch(const std::string& kernel) override;
    [[nodiscard]] bool has_fp64() const noexcept override { return info_.fp64; }
    [[nodiscard]] const char* api_name() const noexcept override { return "OpenCL"; }
    // The program of an OpenCL C source the registry keeps (opencl_source.h), built at its first use.
    OpenClProgram& source_program(const KernelRegistry::OpenClSource& source);
    // Enqueues `kernel` (its arguments set) over `global` work items in
    // `dims` dimensions; `what` names it in an error. Returns its event.
    DeviceEvent enqueue_kernel(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local,
                               const std::string& what);

    // A CL_MEM_USE_HOST_PTR buffer over host memory [addr, addr + nbytes) that
    // this process maps, for one launch (a zero-copy run's host backing). Throws
    // std::invalid_argument on a device that does not share host memory.
    cl_mem wrap_host(const char* what, uint64_t addr, uint64_t nbytes);
    // After the launch: maps and unmaps `buffer` (nbytes long), so the host sees
    // what the kernel wrote, then releases it. Throws std::runtime_error on an
    // OpenCL error (the buffer released all the same).
    void unwrap_host(cl_mem buffer, uint64_t nbytes);

private:
    OpenClDevice(const KernelRegistry& kernels, OpenClDeviceInfo info, uint64_t memory_bytes);
    // A buffer of nbytes, `what` naming it in an error (no larger than one buffer may be on this device).
    cl_mem make_region(uint64_t nbytes, const std::string& what) override;
    DeviceEvent remember(cl_event event);
    [[noreturn]] void fail(const std::string& what, cl_int code) const;

    const OpenClApi& cl_;
    const KernelRegistry& kernels_;
    OpenClDeviceInfo info_;
    DeviceFacts facts_;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    std::mutex program_mu_;
    std::unique_ptr<OpenClProgram> std_program_;
    std::map<const KernelRegistry::OpenClSource*, std::unique_ptr<OpenClProgram>> source_programs_;
    std::mutex events_mu_;
    std::map<DeviceEvent, cl_event> events_;
    DeviceEvent next_event_ = 1;
};

}  // namespace simpler::chip::opencl
