// The standard set's tiled dense linear algebra: kernels on 2-D tile views
// (typically tiles of one matrix in one buffer), FLOAT32 or FLOAT64, every
// tensor of one dtype, through the serial OpenBLAS's LAPACK / BLAS where the
// views are BLAS operands (std_blas.h) and portable loops otherwise (any
// strides). Names as registered, with the tags their orchestrations give:
//   std.potrf (A)          A INOUT, n x n: its lower triangle becomes L, the
//                          lower Cholesky factor (A = L·Lᵀ); the strict upper
//                          triangle is neither read nor written. A tile that is
//                          not positive definite fails with LAPACK's info (the
//                          order of the leading minor that is not); the task
//                          that failed names which tile it was.
//   std.trsm  (L, B)       L INPUT n x n (lower, non-unit), B INOUT m x n:
//                          B = B·L⁻ᵀ. L's strict upper triangle is not read.
//   std.syrk  (A, C)       A INPUT n x k, C INOUT n x n: C = C − A·Aᵀ on C's
//                          lower triangle; its strict upper one untouched.
//   std.gemm  (A, B, C; ta, tb, alpha, beta)  A, B INPUT, C INOUT:
//                          C = alpha·op(A)·op(B) + beta·C, op(X) = Xᵀ when
//                          its flag (scalar 0 for A, 1 for B) is 1, X when 0;
//                          alpha, beta in scalars 2 and 3 as the dtype's bits
//                          (an f32's in the low 32 bits, an f64's in all 64).
//                          beta = 0 does not read C.
// These are what a right-looking tiled Cholesky is made of: per step k,
// potrf(A_kk), trsm(A_kk, A_ik), syrk(A_ik, A_ii), gemm(A_ik, A_jk, A_ij; 0, 1, -1, 1).
#pragma once

#include "simpler/chip/kernel_api.h"

namespace simpler::chip {

int32_t std_potrf(const KernelArgs* a);
int32_t std_trsm(const KernelArgs* a);
int32_t std_syrk(const KernelArgs* a);
int32_t std_gemm(const KernelArgs* a);

}  // namespace simpler::chip
