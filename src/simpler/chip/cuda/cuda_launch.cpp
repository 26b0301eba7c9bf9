#include "simpler/chip/cuda/cuda_launch.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "simpler/chip/clc/clc_view.h"
#include "simpler/chip/cuda/cuda_device.h"

namespace simpler::chip::cuda {

void grid_for(uint32_t dims, const size_t* global, const unsigned (&block)[3], unsigned (&grid)[3]) {
    if (dims == 0 || dims > 3) throw std::invalid_argument("a launch over " + std::to_string(dims) + " dimensions");
    static constexpr uint64_t LIMIT[3] = {(uint64_t{1} << 31) - 1, 65535, 65535};
    for (uint32_t d = 0; d < 3; ++d) {
        const uint64_t n = d < dims ? global[d] : 1;
        const uint64_t blocks = n == 0 ? 1 : (n + block[d] - 1) / block[d];
        if (blocks > LIMIT[d])
            throw std::invalid_argument("a launch of " + std::to_string(n) + " work items in dimension " +
                                        std::to_string(d) + " needs " + std::to_string(blocks) +
                                        " blocks, past CUDA's " + std::to_string(LIMIT[d]));
        grid[d] = static_cast<unsigned>(blocks);
    }
}

CudaLaunch::CudaLaunch(CudaDevice& device, CUfunction function, std::string kernel)
    : device_(device), function_(function), name_(std::move(kernel)) {}

ClcLaunch& CudaLaunch::arg(const void* value, size_t size) {
    const auto* p = static_cast<const unsigned char*>(value);
    args_.emplace_back(p, p + size);
    return *this;
}

ClcLaunch& CudaLaunch::tensor(const Tensor& t) {
    const uint64_t elem = data_type_element_size(t.dtype);
    const auto [region, offset] = device_.resolve(name_.c_str(), t.addr, t.size);
    if (elem == 0 || offset % elem != 0)
        throw std::runtime_error("argument " + std::to_string(args_.size()) +
                                 ": the tensor's backing is not aligned to its elements in device memory");
    const clc::ClcView v = clc::view_of(t, offset / elem);
    arg(&region, sizeof region);
    return arg(&v, sizeof v);
}

ClcLaunch& CudaLaunch::buffer(uint64_t addr, uint64_t nbytes, uint64_t element_size) {
    const auto [region, offset] = device_.resolve(name_.c_str(), addr, nbytes);
    const uint64_t base = offset / element_size;
    arg(&region, sizeof region);
    return arg(&base, sizeof base);
}

ClcLaunch& CudaLaunch::scalar(uint64_t s) { return arg(&s, sizeof s); }

void CudaLaunch::run(uint32_t dims, const size_t* global, const size_t* local) {
    unsigned block[3] = {1, 1, 1};
    if (local != nullptr)
        for (uint32_t d = 0; d < dims && d < 3; ++d) block[d] = static_cast<unsigned>(local[d]);
    else if (dims == 1)
        block[0] = 256;
    else
        block[0] = block[1] = 16;
    unsigned grid[3];
    grid_for(dims, global, block, grid);
    std::vector<void*> params;
    params.reserve(args_.size());
    for (std::vector<unsigned char>& a : args_) params.push_back(a.data());
    device_.wait(device_.launch_function(function_, grid, block, params.data(), "kernel '" + name_ + "'"));
}

}  // namespace simpler::chip::cuda
