// How the standard kernels reach the serial OpenBLAS (cmake/simpler_openblas.cmake):
// whether a 2-D view reads as a BLAS operand, and the lock every call takes.
// Built only with SIMPLER_HAVE_OPENBLAS; without it every kernel takes its
// portable loop.
#pragma once

#ifdef SIMPLER_HAVE_OPENBLAS
#include <cstdint>
#include <mutex>

namespace simpler::chip {

// How a [rows, cols] view with element strides (s0, s1) reads as a BLAS
// operand: a row-major matrix with unit inner stride and leading dimension ld
// (row stride at least cols), or a column-major one (`transposed`: strides
// (1, ld) with ld at least rows). A dimension of extent 1 takes any stride.
// Anything else (a non-unit inner stride, rows that overlap, strides past
// INT_MAX) is not ok and takes the portable loop.
struct BlasLayout {
    bool ok = false;
    bool transposed = false;
    int ld = 0;
};

BlasLayout blas_layout(uint32_t rows, uint32_t cols, uint32_t s0, uint32_t s1) noexcept;

// Debian's serial OpenBLAS (0.3.21) is built without USE_LOCKING: two threads
// in it at once race on its shared work buffers and return wrong results
// (several in every 10,000 calls of a 4-thread 96 x 96 sgemm test on this
// machine). The core threads of a chip therefore take turns; one core thread
// per chip (or a chip per core) loses nothing, several lose their parallelism
// on the BLAS paths (docs/chip.md).
std::mutex& blas_mutex() noexcept;

}  // namespace simpler::chip
#endif
