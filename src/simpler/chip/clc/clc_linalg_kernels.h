// The tiled linear algebra kernels (std_linalg_kernels.h) as OpenCL C, on a KernelDevice:
// their OpenCL C, FLOAT32 and FLOAT64 (where the device has cl_khr_fp64), on
// 2-D views of any strides, and their launch after the C++ kernels' argument
// checks (std_linalg_args.h), so both forms refuse alike:
//   std.gemm  one work item per element of C
//   std.syrk  one work item per element of C's lower triangle
//   std.trsm  one work item per row of B (each row solves on its own)
//   std.potrf one work group, column by column (a left-looking Cholesky), its
//             info word in device memory read back: a tile that is not
//             positive definite fails as the C++ kernel does, with LAPACK's
//             info convention.
// Part of the standard kernels' program (clc_std_kernels.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "simpler/chip/kernel_api.h"

namespace simpler::chip {
class KernelDevice;
}  // namespace simpler::chip

namespace simpler::chip::clc {

// The OpenCL C of the four kernels (appended to the standard set's source).
const char* linalg_kernels_source() noexcept;

// True for std.potrf, std.trsm, std.syrk and std.gemm.
bool is_linalg_kernel(std::string_view name) noexcept;

// Runs `name` on `args` on `device`. Host layer: throws std::runtime_error on
// a device failure (launch_std_kernel reports it through KernelArgs::error).
int32_t launch_linalg_kernel(KernelDevice& device, std::string_view name, const KernelArgs& args);

}  // namespace simpler::chip::clc
