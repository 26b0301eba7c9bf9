// KernelDevice: a device that runs the standard set as OpenCL C kernels
// (clc/): OpenCL natively, CUDA through its dialect (cuda/cuda_dialect.h). What
// the standard kernels' launchers (clc/clc_std_kernels.h) need of it beyond the
// Device interface: a launch of one kernel of the standard program, and
// whether it computes in double precision.
//
// ClcLaunch: one launch being put together — its arguments in order (a tensor
// as its buffer and simpler_view, clc/clc_view.h; a block of device memory as
// its buffer and element base; a scalar as a 64-bit ulong), then run() over a
// grid of work items, waiting for the kernel. Host layer: the setters and
// run() throw std::runtime_error naming the argument, the kernel and the
// device's error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "simpler/chip/device.h"
#include "simpler/chip/tensor.h"

namespace simpler::chip {

class ClcLaunch {
public:
    ClcLaunch() = default;
    ClcLaunch(const ClcLaunch&) = delete;
    ClcLaunch& operator=(const ClcLaunch&) = delete;
    virtual ~ClcLaunch() = default;

    virtual ClcLaunch& tensor(const Tensor& t) = 0;
    virtual ClcLaunch& buffer(uint64_t addr, uint64_t nbytes, uint64_t element_size) = 0;
    virtual ClcLaunch& scalar(uint64_t s) = 0;
    // Runs over `global` work items in `dims` (1 or 2) dimensions, in groups of
    // `local` when given, and returns once the kernel completed.
    virtual void run(uint32_t dims, const size_t* global, const size_t* local = nullptr) = 0;
};

class KernelDevice : public Device {
public:
    // A launch of `kernel` (an OpenCL C name: "std_vector_add_f32") of the
    // standard program, which is built at its first use.
    virtual std::unique_ptr<ClcLaunch> std_launch(const std::string& kernel) = 0;
    // Whether the device computes in double precision (its FLOAT64 kernels exist).
    [[nodiscard]] virtual bool has_fp64() const noexcept = 0;
    // "OpenCL", "CUDA": the API, for messages ("OpenCL device 'pthread-...'").
    [[nodiscard]] virtual const char* api_name() const noexcept = 0;
};

}  // namespace simpler::chip
