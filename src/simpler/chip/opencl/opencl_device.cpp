#include "simpler/chip/opencl/opencl_device.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/chip/clc/clc_std_kernels.h"
#include "simpler/chip/opencl/opencl_launch.h"

namespace simpler::chip::opencl {
namespace {

OpenClDeviceInfo choose(const DeviceChoice& choice) {
    const std::vector<OpenClDeviceInfo> found = find_opencl_devices(choice.platform);
    return found[choice.index % found.size()];
}

}  // namespace

OpenClDevice::OpenClDevice(const KernelRegistry& kernels, const DeviceChoice& choice, uint64_t memory_bytes)
    : OpenClDevice(kernels, choose(choice), memory_bytes) {}

OpenClDevice::OpenClDevice(const KernelRegistry& kernels, OpenClDeviceInfo info, uint64_t memory_bytes)
    : RegionDevice(memory_bytes, info.name), cl_(opencl_api()), kernels_(kernels), info_(std::move(info)) {
    facts_.kind = DeviceKind::OPENCL;
    facts_.platform = info_.platform_name;
    facts_.name = info_.name;
    facts_.version = info_.version;
    facts_.memory_bytes = info_.global_memory;
    facts_.compute_units = info_.compute_units;
    facts_.concurrent_kernels = 1;  // launches run one at a time on the chip's one in-order queue
    facts_.unified_host_memory = info_.unified_host_memory;  // zero-copy runs: wrap_host
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(info_.platform),
                                           0};
    cl_int rc = CL_SUCCESS;
    context_ = cl_.CreateContext(props, 1, &info_.device, nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS) fail("clCreateContext", rc);
    queue_ = cl_.CreateCommandQueue(context_, info_.device, 0, &rc);
    if (rc != CL_SUCCESS) {
        cl_.ReleaseContext(context_);
        fail("clCreateCommandQueue", rc);
    }
    try {
        regions_.add(regions_.arena_range(),
                     make_region(regions_.arena_range().nbytes, "device memory (lower the chip's arena_bytes)"));
    } catch (...) {
        cl_.ReleaseCommandQueue(queue_);
        cl_.ReleaseContext(context_);
        throw;
    }
}

OpenClDevice::~OpenClDevice() {
    cl_.Finish(queue_);
    for (auto& [id, ev] : events_) cl_.ReleaseEvent(ev);
    for (const auto& r : regions_.regions()) cl_.ReleaseMemObject(r.buffer);
    cl_.ReleaseCommandQueue(queue_);
    cl_.ReleaseContext(context_);
}

void OpenClDevice::fail(const std::string& what, cl_int code) const {
    throw std::runtime_error("OpenCL device '" + info_.name + "': " + what + " failed: " + cl_error_name(code));
}

cl_mem OpenClDevice::make_region(uint64_t nbytes, const std::string& what) {
    if (nbytes > info_.max_allocation)
        throw std::runtime_error("OpenCL: device '" + info_.name + "' lets one buffer hold at most " +
                                 std::to_string(info_.max_allocation) + " bytes; its " + what + " asks " +
                                 std::to_string(nbytes));
    cl_int rc = CL_SUCCESS;
    cl_mem m = cl_.CreateBuffer(context_, CL_MEM_READ_WRITE, nbytes, nullptr, &rc);
    if (rc != CL_SUCCESS) fail("clCreateBuffer of its " + what + " (" + std::to_string(nbytes) + " bytes)", rc);
    return m;
}

cl_mem OpenClDevice::wrap_host(const char* what, uint64_t addr, uint64_t nbytes) {
    if (!facts_.unified_host_memory)
        throw std::invalid_argument(std::string(what) + ": host range " + device_address_text(addr) + " + " +
                                    std::to_string(nbytes) + " bytes: '" + info_.name +
                                    "' does not share host memory (stage the run)");
    if (nbytes == 0 || nbytes > info_.max_allocation)
        throw std::invalid_argument(std::string(what) + ": host range " + device_address_text(addr) + " + " +
                                    std::to_string(nbytes) + " bytes: '" + info_.name + "' lets one buffer hold 1 to " +
                                    std::to_string(info_.max_allocation) + " bytes");
    cl_int rc = CL_SUCCESS;
    cl_mem m =
        cl_.CreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, nbytes, reinterpret_cast<void*>(addr), &rc);
    if (rc != CL_SUCCESS)
        fail("clCreateBuffer over host memory " + device_address_text(addr) + " (" + std::to_string(nbytes) + " bytes)",
             rc);
    return m;
}

void OpenClDevice::unwrap_host(cl_mem buffer, uint64_t nbytes) {
    cl_int rc = CL_SUCCESS;
    void* p = cl_.EnqueueMapBuffer(queue_, buffer, CL_TRUE, CL_MAP_READ, 0, nbytes, 0, nullptr, nullptr, &rc);
    if (rc == CL_SUCCESS) {
        cl_event ev = nullptr;
        rc = cl_.EnqueueUnmapMemObject(queue_, buffer, p, 0, nullptr, &ev);
        if (rc == CL_SUCCESS) {
            rc = cl_.WaitForEvents(1, &ev);
            cl_.ReleaseEvent(ev);
        }
    }
    cl_.ReleaseMemObject(buffer);
    if (rc != CL_SUCCESS) fail("mapping a host backing after a kernel", rc);
}

DeviceEvent OpenClDevice::remember(cl_event event) {
    std::lock_guard<std::mutex> lock(events_mu_);
    const DeviceEvent id = next_event_++;
    events_.emplace(id, event);
    return id;
}

DeviceEvent OpenClDevice::copy_to_device(uint64_t dst, const void* src, uint64_t nbytes) {
    if (nbytes == 0) return 0;
    const auto [buffer, offset] = resolve("copy_to_device", dst, nbytes);
    cl_event ev = nullptr;
    const cl_int rc = cl_.EnqueueWriteBuffer(queue_, buffer, CL_FALSE, offset, nbytes, src, 0, nullptr, &ev);
    if (rc != CL_SUCCESS) fail("clEnqueueWriteBuffer of " + std::to_string(nbytes) + " bytes", rc);
    return remember(ev);
}

DeviceEvent OpenClDevice::copy_to_host(void* dst, uint64_t src, uint64_t nbytes) {
    if (nbytes == 0) return 0;
    const auto [buffer, offset] = resolve("copy_to_host", src, nbytes);
    cl_event ev = nullptr;
    const cl_int rc = cl_.EnqueueReadBuffer(queue_, buffer, CL_FALSE, offset, nbytes, dst, 0, nullptr, &ev);
    if (rc != CL_SUCCESS) fail("clEnqueueReadBuffer of " + std::to_string(nbytes) + " bytes", rc);
    return remember(ev);
}

void OpenClDevice::wait(DeviceEvent event) {
    if (event == 0) return;
    cl_event ev = nullptr;
    {
        std::lock_guard<std::mutex> lock(events_mu_);
        const auto it = events_.find(event);
        if (it == events_.end()) return;  // already waited for, or released by synchronize()
        ev = it->second;
        events_.erase(it);
    }
    const cl_int rc = cl_.WaitForEvents(1, &ev);
    cl_int status = CL_COMPLETE;
    cl_.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    cl_.ReleaseEvent(ev);
    if (rc != CL_SUCCESS) fail("waiting for a queued command", rc);
    if (status < 0) fail("a queued command", status);
}

void OpenClDevice::synchronize() {
    const cl_int rc = cl_.Finish(queue_);
    std::map<DeviceEvent, cl_event> done;
    {
        std::lock_guard<std::mutex> lock(events_mu_);
        done.swap(events_);
    }
    cl_int failed = CL_SUCCESS;
    for (auto& [id, ev] : done) {
        cl_int status = CL_COMPLETE;
        cl_.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
        if (status < 0 && failed == CL_SUCCESS) failed = status;
        cl_.ReleaseEvent(ev);
    }
    if (rc != CL_SUCCESS) fail("clFinish", rc);
    if (failed != CL_SUCCESS) fail("a queued command", failed);
}

OpenClProgram& OpenClDevice::std_program() {
    std::lock_guard<std::mutex> lock(program_mu_);
    if (!std_program_)
        std_program_ =
            std::make_unique<OpenClProgram>(context_, info_.device, clc::std_kernels_source(), "the standard kernels");
    return *std_program_;
}

std::unique_ptr<ClcLaunch> OpenClDevice::std_launch(const std::string& kernel) {
    return std::make_unique<KernelLaunch>(*this, std_program(), kernel);
}

OpenClProgram& OpenClDevice::source_program(const KernelRegistry::OpenClSource& source) {
    std::lock_guard<std::mutex> lock(program_mu_);
    std::unique_ptr<OpenClProgram>& p = source_programs_[&source];
    if (!p) p = std::make_unique<OpenClProgram>(context_, info_.device, source.text, source.origin);
    return *p;
}

DeviceEvent OpenClDevice::enqueue_kernel(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local,
                                         const std::string& what) {
    cl_event ev = nullptr;
    const cl_int rc = cl_.EnqueueNDRangeKernel(queue_, kernel, dims, nullptr, global, local, 0, nullptr, &ev);
    if (rc != CL_SUCCESS) fail("clEnqueueNDRangeKernel of " + what, rc);
    return remember(ev);
}

void OpenClDevice::prepare(uint32_t kernel_id) {
    const char* name = kernels_.kernel_name(kernel_id);
    if (name != nullptr && clc::is_std_kernel(name)) {
        std_program();
    } else if (const KernelRegistry::OpenClSource* source = kernels_.opencl_source(kernel_id); source != nullptr) {
        source_program(*source).kernel(name);
    }
}

int32_t OpenClDevice::launch(uint32_t kernel_id, const KernelArgs& args) noexcept {
    const char* name = kernels_.kernel_name(kernel_id);
    if (name != nullptr && clc::is_std_kernel(name)) return clc::launch_std_kernel(*this, name, args);
    if (const KernelRegistry::OpenClSource* source = kernels_.opencl_source(kernel_id); source != nullptr) {
        try {
            return launch_source_kernel(*this, source_program(*source), name, args);
        } catch (const std::exception& e) {  // the program did not build
            return kernel_fail(&args, "%s", e.what());
        }
    }
    return kernel_fail(&args, "kernel '%s' has no OpenCL form on device '%s'", name != nullptr ? name : "?",
                       info_.name.c_str());
}

}  // namespace simpler::chip::opencl
