// CudaLaunch: one launch of a kernel of the standard program on a CudaDevice
// (kernel_device.h's ClcLaunch) — its arguments kept in order as the OpenCL C
// kernel takes them (a tensor as its region's device pointer and its
// simpler_view, clc/clc_view.h, the view's offset counted from the region's
// start; a block of device memory as its region's pointer and element base; a
// scalar as a 64-bit ulong), then cuLaunchKernel on the device's stream over
// blocks of `local` threads (default: 256 in one dimension, 16 x 16 in two),
// as many as cover `global` (the kernels return past their last element), and
// a wait for it.
//
// Host layer: the setters and run() throw std::runtime_error naming the
// argument, the kernel and the CUresult.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "simpler/chip/kernel_device.h"

namespace simpler::chip::cuda {

class CudaDevice;

class CudaLaunch final : public ClcLaunch {
public:
    CudaLaunch(CudaDevice& device, CUfunction function, std::string kernel);

    ClcLaunch& tensor(const Tensor& t) override;
    ClcLaunch& buffer(uint64_t addr, uint64_t nbytes, uint64_t element_size) override;
    ClcLaunch& scalar(uint64_t s) override;
    void run(uint32_t dims, const size_t* global, const size_t* local = nullptr) override;

private:
    ClcLaunch& arg(const void* value, size_t size);

    CudaDevice& device_;
    CUfunction function_;
    std::string name_;
    std::vector<std::vector<unsigned char>> args_;  // each argument's bytes, in order
};

// The grid of blocks of `block` threads that covers `global` work items in
// each of `dims` dimensions (1 to 3; the others 1). Throws std::invalid_argument
// for 0 dimensions, more than 3, or a grid past CUDA's limits.
void grid_for(uint32_t dims, const size_t* global, const unsigned (&block)[3], unsigned (&grid)[3]);

}  // namespace simpler::chip::cuda
