// How the standard kernels reach the BLAS loaded at run time (blas_library.h):
// whether one is there, whether a 2-D view reads as a BLAS operand, in which
// CBLAS order, the lock every call takes, and the calls themselves typed by
// element (float, double). Without a library every kernel takes its portable
// loop.
#pragma once

#include <cstdint>
#include <mutex>

#include "simpler/chip/blas_library.h"

namespace simpler::chip {

// CBLAS's enumerations, with CBLAS's values (the library's ABI).
enum CBLAS_ORDER : int { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE : int { CblasNoTrans = 111, CblasTrans = 112 };
enum CBLAS_UPLO : int { CblasUpper = 121, CblasLower = 122 };
enum CBLAS_DIAG : int { CblasNonUnit = 131 };
enum CBLAS_SIDE : int { CblasRight = 142 };

// Whether the kernels' BLAS paths are open: a library is loaded.
inline bool have_blas() noexcept { return blas_library() != nullptr; }

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
// machine). Any library may be the one loaded, so the core threads of a chip
// take turns in every one; one core thread
// per chip (or a chip per core) loses nothing, several lose their parallelism
// on the BLAS paths (docs/internals/chip.md).
std::mutex& blas_mutex() noexcept;

// The CBLAS order in which `out` reads as itself, and whether an operand laid
// out as `in` reads as its own transpose in that order.
inline CBLAS_ORDER order_of(BlasLayout out) noexcept { return out.transposed ? CblasColMajor : CblasRowMajor; }
inline bool flipped(BlasLayout in, BlasLayout out) noexcept { return in.transposed != out.transposed; }
inline CBLAS_TRANSPOSE trans(bool t) noexcept { return t ? CblasTrans : CblasNoTrans; }

// C = alpha·op(A)·op(B) + beta·C (?gemm).
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc) noexcept;
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
               const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) noexcept;
// B = B·op(L)⁻¹, L triangular as `u` says, non-unit (?trsm, right side).
void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const float* l, int ldl, float* b,
               int ldb) noexcept;
void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const double* l, int ldl, double* b,
               int ldb) noexcept;
// C = C − op(A)·op(A)ᵀ on C's lower triangle (?syrk, alpha −1, beta 1).
void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const float* a, int lda, float* c, int ldc) noexcept;
void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const double* a, int lda, double* c, int ldc) noexcept;
// LAPACK's column-major Cholesky of the `uplo` triangle (?potrf); its info.
int lapack_potrf(char uplo, int n, float* p, int ld) noexcept;
int lapack_potrf(char uplo, int n, double* p, int ld) noexcept;

}  // namespace simpler::chip
