// What each tiled linear algebra kernel (std_linalg_kernels.h) accepts, checked
// the same way by its C++ form and its OpenCL form (clc/clc_linalg_kernels.h):
// the tensor and scalar counts, 2-D tensors of one dtype (FLOAT32 or FLOAT64),
// square tiles and agreeing shapes, std.gemm's transpose flags. Each returns
// CHIP_OK, or fails the kernel with a message naming it (kernel_fail).
#pragma once

#include "simpler/chip/kernel_api.h"

namespace simpler::chip {

int32_t check_potrf_args(const KernelArgs* a);
int32_t check_trsm_args(const KernelArgs* a);
int32_t check_syrk_args(const KernelArgs* a);
int32_t check_gemm_args(const KernelArgs* a);

// Fails std.potrf with LAPACK's info for its tile: info > 0, the order of the
// leading minor that is not positive definite; info < 0, the argument LAPACK refused.
int32_t potrf_failed(const KernelArgs* a, int info);

}  // namespace simpler::chip
