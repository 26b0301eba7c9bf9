// The standard chip orchestrations that ship built into the project, and their
// library table. Each splits its work into row tiles (dim 0 of the output) —
// twice as many as the cores it is told to tile for, at most one per row, and
// one for one core (an OpenCL chip) — and submits one kernel task per tile, so
// disjoint tiles run concurrently:
//   std.vector_add / std.mul  (a, b, c)   INPUT, INPUT, OUTPUT_EXISTING
//   std.add_scalar            (a, c; s)   INPUT, OUTPUT_EXISTING; s: f32 or f64 bits (the dtype's)
//   std.copy                  (src, dst)  INPUT, OUTPUT_EXISTING
//   std.matmul                (A, B, C)   row tiles of A and C; B whole
//   std.sum_n                 (x_1..x_k, out; [p])  INPUT..., OUTPUT_EXISTING
//                                         (INOUT when p, out's place among the terms, is not 0)
//   std.noop                  ()          submits nothing (round-trip measurements)
// and, not split, one kernel task over the whole tiles (std_linalg_kernels.h):
//   std.potrf (A: INOUT), std.trsm (L: INPUT, B: INOUT), std.syrk (A: INPUT,
//   C: INOUT), std.gemm (A, B: INPUT, C: INOUT; ta, tb, alpha, beta)
// A wrong argument count fails the run with a message naming the orchestration.
#pragma once

#include "simpler/chip/library_abi.h"

namespace simpler::chip {

const LibraryTable& standard_orchestration_table() noexcept;

}  // namespace simpler::chip
