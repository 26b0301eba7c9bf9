// The standard kernel set that ships built into the project, and its library
// table. Kernels (names as registered):
//   std.vector_add  (a, b, c)    c = a + b        FLOAT32, FLOAT64 or INT32, same shapes
//   std.mul         (a, b, c)    c = a * b        FLOAT32, FLOAT64 or INT32, same shapes
//   std.add_scalar  (a, c; s)    c = a + s        FLOAT32 (s: f32 bits in scalar 0) or
//                                                 FLOAT64 (s: f64 bits in scalar 0)
//   std.copy        (src, dst)   dst = src        any dtype, same shapes and dtype
//   std.matmul      (A, B, C)    C = A @ B        FLOAT32 or FLOAT64, A[M,K] B[K,N] C[M,N]
//   std.sum_n       (x_1..x_k, out; [p])  out = x_1 + ... + x_k, left to right;
//                                with scalar 0 p in [1, k+1] out's own value is
//                                the p-th term (out INOUT). FLOAT32, FLOAT64,
//                                FLOAT16, BFLOAT16 (summed in float, rounded once to
//                                nearest even), INT32 (wrapping); 1 <= k <= 31,
//                                same shapes and dtype
//   std.potrf, std.trsm, std.syrk, std.gemm  tiled dense linear algebra,
//                                FLOAT32 or FLOAT64 (std_linalg_kernels.h)
// Every kernel honours strides (transposed and sub-region views) and checks its
// arguments, failing with a message rather than reading out of its views.
#pragma once

#include "simpler/chip/library_abi.h"

namespace simpler::chip {

const LibraryTable& standard_kernel_table() noexcept;

}  // namespace simpler::chip
