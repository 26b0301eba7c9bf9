// CudaDevice: a chip's device driven through the CUDA driver API (cuda_api.h)
// — one GPU, its primary context and one non-blocking stream, opened in the
// chip process (after the fork: CUDA does not survive it).
//
// Memory: one cuMemAlloc region of the chip's memory size behind the addresses
// of a DeviceRegions (device_regions.h), which resolves each to (the region's
// CUdeviceptr, offset); a range adopted with adopt_range (the Worker's
// DEVICE_MALLOC heap of this chip) is one more region. host_address() is
// always nullptr: the bytes move only by copies.
//
// Copies: cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on the stream, in issue order
// (as OpenCL's in-order queue), each recording a CUevent from a pool that
// becomes the DeviceEvent; wait() synchronises on it, synchronize() on the
// stream, and both return the events to the pool. From pageable host memory
// the driver stages the bytes, so a copy's host side may be reused once the
// call returns (pinned staging is a later step).
//
// Errors: every CUresult by the driver's name for it, with the call and the
// device. A sticky one (cu_error_is_sticky: an illegal address, a trap, a
// hardware error) leaves the context unusable: the device is lost, and every
// later call throws saying so and what lost it, never touching the context.
//
// Kernels: the standard set (clc/clc_std_kernels.h), its OpenCL C compiled by
// NVRTC to CUBIN for the device's architecture at its first use (or prepare();
// cuda_compiler.h, cached on disk) and loaded as one module; each launch is
// cuLaunchKernel on the stream (cuda_launch.h) and waited for. A kernel with
// no CUDA form (a C++ kernel, an OpenCL C source) fails naming the kernel and
// the device. open_device does not hand this device to a chip yet.
//
// Thread-safe: the chip's core threads may call at once; each binds the
// context to itself before its first call (cuCtxSetCurrent), and the event
// table and pool have their own mutex. Host layer: the constructor and the
// copies throw std::runtime_error naming the device and the CUresult,
// std::invalid_argument for a range that is not device memory of this device.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "simpler/chip/cuda/cuda_api.h"
#include "simpler/chip/cuda/cuda_devices.h"
#include "simpler/chip/device.h"
#include "simpler/chip/kernel_device.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/region_device.h"

namespace simpler::chip::cuda {

class CudaDevice final : public RegionDevice<CUdeviceptr> {
public:
    // Opens device choice.index modulo the devices find_cuda_devices(choice.platform) finds.
    CudaDevice(const KernelRegistry& kernels, const DeviceChoice& choice, uint64_t memory_bytes);
    ~CudaDevice() override;

    [[nodiscard]] const DeviceFacts& facts() const noexcept override { return facts_; }

    DeviceEvent copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) override;
    DeviceEvent copy_to_host(void* dst, uint64_t src, uint64_t nbytes) override;
    void wait(DeviceEvent event) override;
    void synchronize() override;

    void prepare(uint32_t kernel_id) override;
    int32_t launch(uint32_t kernel_id, const KernelArgs& args) noexcept override;

    std::unique_ptr<ClcLaunch> std_launch(const std::string& kernel) override;
    [[nodiscard]] bool has_fp64() const noexcept override { return true; }
    [[nodiscard]] const char* api_name() const noexcept override { return "CUDA"; }

    // The device pointer of [addr, addr + nbytes); std::invalid_argument naming
    // `what` when no region of this device holds the range whole.
    [[nodiscard]] CUdeviceptr pointer(const char* what, uint64_t addr, uint64_t nbytes) const;
    // Launches `function` on the stream over `grid` blocks of `block` threads
    // with `params` (cuLaunchKernel's); `what` names it in an error. Returns its event.
    DeviceEvent launch_function(CUfunction function, const unsigned (&grid)[3], const unsigned (&block)[3],
                                void** params, const std::string& what);
    // Why the device is lost (the first sticky error); empty while it is not.
    [[nodiscard]] std::string lost() const;

private:
    // Makes the context current on the calling thread (once per thread);
    // throws when the device is lost.
    void bind() const;
    // Throws std::runtime_error naming `what`, the CUresult and the device
    // unless `rc` is CUDA_SUCCESS; a sticky error loses the device first.
    void check(CUresult rc, const std::string& what) const;
    CudaDevice(const KernelRegistry& kernels, CudaDeviceInfo info, uint64_t memory_bytes);
    CUdeviceptr make_region(uint64_t nbytes, const std::string& what) override;
    DeviceEvent record(const std::string& what);
    // Returns `ev` to the pool.
    void recycle(CUevent ev);
    // The standard module, compiled and loaded at the first call; module_mu_ held.
    CUmodule std_module_locked();
    // The standard kernel `name` (its module compiled and loaded at the first call).
    CUfunction std_function(const std::string& name);

    const CudaApi& cu_;
    const KernelRegistry& kernels_;
    CudaDeviceInfo info_;
    DeviceFacts facts_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    CUstream stream_ = nullptr;
    mutable std::mutex mu_;  // events_, pool_, lost_
    std::map<DeviceEvent, CUevent> events_;
    std::vector<CUevent> pool_;
    DeviceEvent next_event_ = 1;
    mutable std::string lost_;
    mutable std::atomic<bool> is_lost_{false};  // lost_ is set: bind() asks this, not the mutex
    std::mutex module_mu_;  // std_module_, functions_
    CUmodule std_module_ = nullptr;
    std::map<std::string, CUfunction> functions_;
};

}  // namespace simpler::chip::cuda
