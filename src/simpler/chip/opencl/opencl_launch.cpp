#include "simpler/chip/opencl/opencl_launch.h"

#include <exception>
#include <stdexcept>
#include <tuple>

#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/opencl/opencl_device.h"
#include "simpler/chip/opencl/opencl_program.h"

namespace simpler::chip::opencl {

KernelLaunch::KernelLaunch(OpenClDevice& device, OpenClProgram& program, const std::string& kernel)
    : device_(device), name_(kernel), lock_(program.kernel_lock()), kernel_(program.kernel(kernel)) {}

KernelLaunch::~KernelLaunch() {
    for (const auto& [buffer, nbytes] : host_buffers_) opencl_api().ReleaseMemObject(buffer);
}

ClcLaunch& KernelLaunch::tensor(const Tensor& t) {
    const uint64_t elem = data_type_element_size(t.dtype);
    cl_mem buffer = nullptr;
    uint64_t offset = 0;  // of the backing in `buffer`, bytes
    if (!device_.contains(t.addr, t.size) && device_.facts().unified_host_memory) {
        // A zero-copy run's host backing: the kernel works on it in place.
        buffer = device_.wrap_host(name_.c_str(), t.addr, t.size);
        host_buffers_.emplace_back(buffer, t.size);
    } else {
        std::tie(buffer, offset) = device_.resolve(name_.c_str(), t.addr, t.size);
    }
    if (elem == 0 || offset % elem != 0)
        throw std::runtime_error("argument " + std::to_string(index_) +
                                 ": the tensor's backing is not aligned to its elements in device memory");
    const clc::ClcView v = clc::view_of(t, offset / elem);
    arg(sizeof(cl_mem), static_cast<const void*>(&buffer));
    return arg(sizeof v, &v);
}

ClcLaunch& KernelLaunch::buffer(uint64_t addr, uint64_t nbytes, uint64_t element_size) {
    const auto [buffer, offset] = device_.resolve(name_.c_str(), addr, nbytes);
    const cl_ulong base = offset / element_size;
    arg(sizeof(cl_mem), static_cast<const void*>(&buffer));
    return arg(sizeof base, &base);
}

ClcLaunch& KernelLaunch::scalar(uint64_t s) {
    const cl_ulong v = s;
    return arg(sizeof v, &v);
}

void KernelLaunch::run(uint32_t dims, const size_t* global, const size_t* local) {
    const DeviceEvent ev = device_.enqueue_kernel(kernel_, dims, global, local, "kernel '" + name_ + "'");
    lock_.unlock();
    device_.wait(ev);
    std::vector<std::pair<cl_mem, uint64_t>> wrapped;
    wrapped.swap(host_buffers_);
    std::string error;
    for (const auto& [buffer, nbytes] : wrapped) {
        try {
            device_.unwrap_host(buffer, nbytes);
        } catch (const std::exception& e) {  // each is released all the same; the first error is reported
            if (error.empty()) error = e.what();
        }
    }
    if (!error.empty()) throw std::runtime_error(error);
}

ClcLaunch& KernelLaunch::arg(size_t size, const void* value) {
    if (const cl_int rc = opencl_api().SetKernelArg(kernel_, index_, size, value); rc != CL_SUCCESS)
        throw std::runtime_error("kernel '" + name_ + "': clSetKernelArg " + std::to_string(index_) +
                                 " failed: " + cl_error_name(rc));
    ++index_;
    return *this;
}

int32_t launch_source_kernel(OpenClDevice& device, OpenClProgram& program, const std::string& name,
                             const KernelArgs& args) noexcept {
    try {
        KernelLaunch launch(device, program, name);
        for (uint32_t i = 0; i < args.tensor_count; ++i) launch.tensor(args.tensors[i]);
        for (uint32_t i = 0; i < args.scalar_count; ++i) launch.scalar(args.scalars[i]);
        size_t global = 1;
        if (args.tensor_count > 0) {
            const Tensor& last = args.tensors[args.tensor_count - 1];
            for (uint32_t d = 0; d < last.ndims && d < MAX_TENSOR_DIMS; ++d) global *= last.shapes[d];
        }
        launch.run(1, &global);
        return CHIP_OK;
    } catch (const std::exception& e) {
        return kernel_fail(&args, "on OpenCL device '%s': %s", device.facts().name.c_str(), e.what());
    }
}

}  // namespace simpler::chip::opencl
