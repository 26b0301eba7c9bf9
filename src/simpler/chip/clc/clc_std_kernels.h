// The standard kernels as OpenCL C, on a KernelDevice (kernel_device.h: OpenCL,
// or CUDA through its dialect): the OpenCL C of every std.*
// kernel the standard orchestrations submit (vector_add, mul, add_scalar,
// copy, matmul as a tiled local-memory kernel, sum_n; the tiled linear
// algebra ones are clc/clc_linalg_kernels.h's), and their launch —
// the same argument checks and messages as the C++ kernels (std_kernels.h),
// then the variant for the tensors' dtype, one work item per output element
// (matmul: 16x16 work groups over C).
//
// Each launch is run on the device and waited for; a failure comes back as a
// status with the message in KernelArgs::error, naming the kernel, the device
// and its error by name.
#pragma once

#include <cstdint>
#include <string_view>

#include "simpler/chip/kernel_api.h"

namespace simpler::chip {
class KernelDevice;
}  // namespace simpler::chip

namespace simpler::chip::clc {

// The OpenCL C of the standard set, the linear algebra kernels' included (built after CLC_PRELUDE).
const char* std_kernels_source() noexcept;

// True when `name` is a standard kernel this file launches.
bool is_std_kernel(std::string_view name) noexcept;

// Fails the kernel named `name` (CHIP_ERR_KERNEL, its message in `a`) when it is
// asked for FLOAT64 on a device with no double precision; CHIP_OK otherwise.
int32_t check_fp64(const KernelDevice& device, const KernelArgs& a, const char* name, uint8_t dtype);

// Runs standard kernel `name` on `args` on `device`.
int32_t launch_std_kernel(KernelDevice& device, std::string_view name, const KernelArgs& args) noexcept;

}  // namespace simpler::chip::clc
