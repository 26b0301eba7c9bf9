#include "simpler/chip/cuda/cuda_device.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/chip/clc/clc_std_kernels.h"
#include "simpler/chip/cuda/cuda_compiler.h"
#include "simpler/chip/cuda/cuda_launch.h"

namespace simpler::chip::cuda {
namespace {

CudaDeviceInfo choose(const DeviceChoice& choice) {
    const std::vector<CudaDeviceInfo> found = find_cuda_devices(choice.platform);
    return found[choice.index % found.size()];
}

// The context this thread made current last (cuCtxSetCurrent is per thread).
thread_local CUcontext current_context = nullptr;

}  // namespace

CudaDevice::CudaDevice(const KernelRegistry& kernels, const DeviceChoice& choice, uint64_t memory_bytes)
    : CudaDevice(kernels, choose(choice), memory_bytes) {}

CudaDevice::CudaDevice(const KernelRegistry& kernels, CudaDeviceInfo info, uint64_t memory_bytes)
    : RegionDevice(memory_bytes, info.name),
      cu_(cuda_api()),
      kernels_(kernels),
      info_(std::move(info)),
      facts_(cuda_facts(info_, cu_.driver_version)) {
    check(cu_.DeviceGet(&device_, info_.ordinal), "cuDeviceGet");
    check(cu_.DevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    try {
        bind();
        check(cu_.StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        regions_.add(regions_.arena_range(),
                     make_region(regions_.arena_range().nbytes, "device memory (lower the chip's arena_bytes)"));
    } catch (...) {
        if (stream_ != nullptr) cu_.StreamDestroy(stream_);
        cu_.DevicePrimaryCtxRelease(device_);
        if (current_context == context_) current_context = nullptr;
        throw;
    }
}

CudaDevice::~CudaDevice() {
    // Best effort: a lost context fails every call, and its resources go with the process.
    if (cu_.CtxSetCurrent(context_) == CUDA_SUCCESS) {
        current_context = context_;
        cu_.StreamSynchronize(stream_);
        for (auto& [id, ev] : events_) cu_.EventDestroy(ev);
        for (CUevent ev : pool_) cu_.EventDestroy(ev);
        if (std_module_ != nullptr) cu_.ModuleUnload(std_module_);
        for (const auto& r : regions_.regions()) cu_.MemFree(r.buffer);
        cu_.StreamDestroy(stream_);
    }
    cu_.DevicePrimaryCtxRelease(device_);
    if (current_context == context_) current_context = nullptr;
}

std::string CudaDevice::lost() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return lost_;
}

void CudaDevice::bind() const {
    if (is_lost_.load(std::memory_order_acquire))
        throw std::runtime_error("CUDA device '" + info_.name + "' is lost: " + lost());
    if (current_context == context_) return;
    check(cu_.CtxSetCurrent(context_), "cuCtxSetCurrent");
    current_context = context_;
}

void CudaDevice::check(CUresult rc, const std::string& what) const {
    if (rc == CUDA_SUCCESS) return;
    const std::string why = what + " failed: " + cu_error_name(cu_, rc);
    if (cu_error_is_sticky(rc)) {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (lost_.empty()) lost_ = why;
        }
        is_lost_.store(true, std::memory_order_release);
        throw std::runtime_error("CUDA device '" + info_.name + "': " + why +
                                 "; the error leaves its context unusable: the device is lost");
    }
    throw std::runtime_error("CUDA device '" + info_.name + "': " + why);
}

CUdeviceptr CudaDevice::make_region(uint64_t nbytes, const std::string& what) {
    bind();
    CUdeviceptr p = 0;
    check(cu_.MemAlloc(&p, nbytes), "cuMemAlloc of its " + what + " (" + std::to_string(nbytes) + " bytes)");
    return p;
}

CUdeviceptr CudaDevice::pointer(const char* what, uint64_t addr, uint64_t nbytes) const {
    const auto [region, offset] = resolve(what, addr, nbytes);
    return region + offset;
}

DeviceEvent CudaDevice::record(const std::string& what) {
    CUevent ev = nullptr;
    {
        const std::lock_guard<std::mutex> lock(mu_);
        if (!pool_.empty()) {
            ev = pool_.back();
            pool_.pop_back();
        }
    }
    if (ev == nullptr) check(cu_.EventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate after " + what);
    if (const CUresult rc = cu_.EventRecord(ev, stream_); rc != CUDA_SUCCESS) {
        recycle(ev);
        check(rc, "cuEventRecord after " + what);
    }
    const std::lock_guard<std::mutex> lock(mu_);
    const DeviceEvent id = next_event_++;
    events_.emplace(id, ev);
    return id;
}

void CudaDevice::recycle(CUevent ev) {
    const std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(ev);
}

DeviceEvent CudaDevice::copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) {
    if (nbytes == 0) return 0;
    const CUdeviceptr to = pointer("copy_to_device", dst, nbytes);
    bind();
    const std::string what = "cuMemcpyHtoDAsync of " + std::to_string(nbytes) + " bytes";
    check(cu_.MemcpyHtoDAsync(to, src, nbytes, stream_), what);
    return record(what);
}

DeviceEvent CudaDevice::copy_to_host(void* dst, uint64_t src, uint64_t nbytes) {
    if (nbytes == 0) return 0;
    const CUdeviceptr from = pointer("copy_to_host", src, nbytes);
    bind();
    const std::string what = "cuMemcpyDtoHAsync of " + std::to_string(nbytes) + " bytes";
    check(cu_.MemcpyDtoHAsync(dst, from, nbytes, stream_), what);
    return record(what);
}

void CudaDevice::wait(DeviceEvent event) {
    if (event == 0) return;
    CUevent ev = nullptr;
    {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = events_.find(event);
        if (it == events_.end()) return;  // already waited for, or released by synchronize()
        ev = it->second;
        events_.erase(it);
    }
    bind();
    const CUresult rc = cu_.EventSynchronize(ev);
    recycle(ev);
    check(rc, "waiting for a copy (cuEventSynchronize)");
}

void CudaDevice::synchronize() {
    bind();
    const CUresult rc = cu_.StreamSynchronize(stream_);
    {
        const std::lock_guard<std::mutex> lock(mu_);
        for (auto& [id, ev] : events_) pool_.push_back(ev);
        events_.clear();
    }
    check(rc, "cuStreamSynchronize");
}

CUmodule CudaDevice::std_module_locked() {
    if (std_module_ == nullptr) {
        const Cubin cubin = compile_cubin(clc::std_kernels_source(), "the standard kernels", info_.compute_major,
                                          info_.compute_minor, facts_.version);
        check(cu_.ModuleLoadData(&std_module_, cubin.bytes.data()),
              "cuModuleLoadData of the standard kernels (" +
                  architecture_name(info_.compute_major, info_.compute_minor) + ")");
    }
    return std_module_;
}

CUfunction CudaDevice::std_function(const std::string& name) {
    bind();
    const std::lock_guard<std::mutex> lock(module_mu_);
    if (const auto it = functions_.find(name); it != functions_.end()) return it->second;
    std_module_locked();
    CUfunction f = nullptr;
    check(cu_.ModuleGetFunction(&f, std_module_, name.c_str()), "cuModuleGetFunction of '" + name + "'");
    functions_.emplace(name, f);
    return f;
}

std::unique_ptr<ClcLaunch> CudaDevice::std_launch(const std::string& kernel) {
    return std::make_unique<CudaLaunch>(*this, std_function(kernel), kernel);
}

DeviceEvent CudaDevice::launch_function(CUfunction function, const unsigned (&grid)[3], const unsigned (&block)[3],
                                        void** params, const std::string& what) {
    bind();
    check(cu_.LaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream_, params,
                           nullptr),
          "cuLaunchKernel of " + what);
    return record(what);
}

void CudaDevice::prepare(uint32_t kernel_id) {
    const char* name = kernels_.kernel_name(kernel_id);
    if (name == nullptr || !clc::is_std_kernel(name)) return;
    bind();
    const std::lock_guard<std::mutex> lock(module_mu_);
    std_module_locked();
}

int32_t CudaDevice::launch(uint32_t kernel_id, const KernelArgs& args) noexcept {
    const char* name = kernels_.kernel_name(kernel_id);
    if (name != nullptr && clc::is_std_kernel(name)) return clc::launch_std_kernel(*this, name, args);
    return kernel_fail(&args, "kernel '%s' has no CUDA form on CUDA device '%s'", name != nullptr ? name : "?",
                       info_.name.c_str());
}

}  // namespace simpler::chip::cuda
