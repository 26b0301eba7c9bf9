#include "simpler/chip/std_blas.h"

#include <climits>

namespace simpler::chip {

BlasLayout blas_layout(uint32_t rows, uint32_t cols, uint32_t s0, uint32_t s1) noexcept {
    if (rows > INT_MAX || cols > INT_MAX) return {};
    const uint32_t row_stride = rows == 1 ? cols : s0;
    const uint32_t col_stride = cols == 1 ? 1 : s1;
    if (col_stride == 1 && row_stride >= cols && row_stride <= INT_MAX)
        return {.ok = true, .transposed = false, .ld = static_cast<int>(row_stride)};
    // The transpose: element (i, j) at i + j * s1, a row-major [cols, rows] with ld s1.
    const uint32_t t_row_stride = cols == 1 ? rows : s1;
    const uint32_t t_col_stride = rows == 1 ? 1 : s0;
    if (t_col_stride == 1 && t_row_stride >= rows && t_row_stride <= INT_MAX)
        return {.ok = true, .transposed = true, .ld = static_cast<int>(t_row_stride)};
    return {};
}

std::mutex& blas_mutex() noexcept {
    static std::mutex m;
    return m;
}

int lapack_potrf(char uplo, int n, float* p, int ld) noexcept {
    int info = 0;
    blas_library()->spotrf(&uplo, &n, p, &ld, &info);
    return info;
}
int lapack_potrf(char uplo, int n, double* p, int ld) noexcept {
    int info = 0;
    blas_library()->dpotrf(&uplo, &n, p, &ld, &info);
    return info;
}

void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const float* l, int ldl, float* b,
               int ldb) noexcept {
    blas_library()->strsm(o, CblasRight, u, t, CblasNonUnit, m, n, 1.0f, l, ldl, b, ldb);
}
void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const double* l, int ldl, double* b,
               int ldb) noexcept {
    blas_library()->dtrsm(o, CblasRight, u, t, CblasNonUnit, m, n, 1.0, l, ldl, b, ldb);
}

void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const float* a, int lda, float* c, int ldc) noexcept {
    blas_library()->ssyrk(o, CblasLower, t, n, k, -1.0f, a, lda, 1.0f, c, ldc);
}
void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const double* a, int lda, double* c, int ldc) noexcept {
    blas_library()->dsyrk(o, CblasLower, t, n, k, -1.0, a, lda, 1.0, c, ldc);
}

void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc) noexcept {
    blas_library()->sgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
               const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) noexcept {
    blas_library()->dgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace simpler::chip
