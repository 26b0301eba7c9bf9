#include "simpler/chip/std_linalg_kernels.h"

#include <cmath>
#include <mutex>

#include "simpler/chip/std_blas.h"
#include "simpler/chip/std_linalg_args.h"

#ifdef SIMPLER_HAVE_OPENBLAS
#include <cblas.h>

extern "C" {
// LAPACK's Cholesky factorisation (column-major), from the same serial OpenBLAS.
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
}
#endif

namespace simpler::chip {
namespace {

constexpr uint8_t F64 = static_cast<uint8_t>(DataType::FLOAT64);

// Element (i, j) of a 2-D view.
template <typename T>
T& el(const Tensor& t, uint32_t i, uint32_t j) noexcept {
    return base_ptr<T>(t)[t.start_offset + uint64_t{i} * t.strides[0] + uint64_t{j} * t.strides[1]];
}

#ifdef SIMPLER_HAVE_OPENBLAS
// The CBLAS order in which `out` reads as itself, and whether an operand laid
// out as `in` reads as its own transpose in that order.
CBLAS_ORDER order_of(BlasLayout out) noexcept { return out.transposed ? CblasColMajor : CblasRowMajor; }
bool flipped(BlasLayout in, BlasLayout out) noexcept { return in.transposed != out.transposed; }
CBLAS_TRANSPOSE trans(bool t) noexcept { return t ? CblasTrans : CblasNoTrans; }

int lapack_potrf(char uplo, int n, float* p, int ld) noexcept {
    int info = 0;
    spotrf_(&uplo, &n, p, &ld, &info);
    return info;
}
int lapack_potrf(char uplo, int n, double* p, int ld) noexcept {
    int info = 0;
    dpotrf_(&uplo, &n, p, &ld, &info);
    return info;
}

void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const float* l, int ldl, float* b,
               int ldb) noexcept {
    cblas_strsm(o, CblasRight, u, t, CblasNonUnit, m, n, 1.0f, l, ldl, b, ldb);
}
void blas_trsm(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const double* l, int ldl, double* b,
               int ldb) noexcept {
    cblas_dtrsm(o, CblasRight, u, t, CblasNonUnit, m, n, 1.0, l, ldl, b, ldb);
}

void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const float* a, int lda, float* c, int ldc) noexcept {
    cblas_ssyrk(o, CblasLower, t, n, k, -1.0f, a, lda, 1.0f, c, ldc);
}
void blas_syrk(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int n, int k, const double* a, int lda, double* c, int ldc) noexcept {
    cblas_dsyrk(o, CblasLower, t, n, k, -1.0, a, lda, 1.0, c, ldc);
}

void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc) noexcept {
    cblas_sgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void blas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
               const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) noexcept {
    cblas_dgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif

// A = L·Lᵀ in place on A's lower triangle; 0, or LAPACK's info: j + 1 when
// the leading minor of order j + 1 is not positive definite.
template <typename T>
int potrf_tile(const Tensor& A) {
    const uint32_t n = A.shapes[0];
#ifdef SIMPLER_HAVE_OPENBLAS
    // Column-major LAPACK sees a row-major tile as its transpose: A's lower
    // triangle is then its upper one.
    if (const BlasLayout l = blas_layout(n, n, A.strides[0], A.strides[1]); l.ok) {
        const std::scoped_lock lock(blas_mutex());
        return lapack_potrf(l.transposed ? 'L' : 'U', static_cast<int>(n), A.data<T>(), l.ld);
    }
#endif
    for (uint32_t j = 0; j < n; ++j) {
        T d = el<T>(A, j, j);
        for (uint32_t k = 0; k < j; ++k) d -= el<T>(A, j, k) * el<T>(A, j, k);
        if (!(d > T{0})) return static_cast<int>(j) + 1;  // NaN too
        const T l = std::sqrt(d);
        el<T>(A, j, j) = l;
        for (uint32_t i = j + 1; i < n; ++i) {
            T s = el<T>(A, i, j);
            for (uint32_t k = 0; k < j; ++k) s -= el<T>(A, i, k) * el<T>(A, j, k);
            el<T>(A, i, j) = s / l;
        }
    }
    return 0;
}

// B = B·L⁻ᵀ: each row x of the result solves x·Lᵀ = b.
template <typename T>
void trsm_tiles(const Tensor& L, const Tensor& B) {
    const uint32_t m = B.shapes[0], n = B.shapes[1];
#ifdef SIMPLER_HAVE_OPENBLAS
    const BlasLayout ll = blas_layout(n, n, L.strides[0], L.strides[1]);
    const BlasLayout lb = blas_layout(m, n, B.strides[0], B.strides[1]);
    if (ll.ok && lb.ok) {
        // L read as its transpose is upper triangular, and B·L⁻ᵀ is B·(Lᵀ)⁻¹ of it untransposed.
        const bool f = flipped(ll, lb);
        const std::scoped_lock lock(blas_mutex());
        blas_trsm(order_of(lb), f ? CblasUpper : CblasLower, trans(!f), static_cast<int>(m), static_cast<int>(n),
                  L.data<T>(), ll.ld, B.data<T>(), lb.ld);
        return;
    }
#endif
    for (uint32_t r = 0; r < m; ++r) {
        for (uint32_t j = 0; j < n; ++j) {
            T s = el<T>(B, r, j);
            for (uint32_t k = 0; k < j; ++k) s -= el<T>(B, r, k) * el<T>(L, j, k);
            el<T>(B, r, j) = s / el<T>(L, j, j);
        }
    }
}

// C = C − A·Aᵀ on C's lower triangle.
template <typename T>
void syrk_tiles(const Tensor& A, const Tensor& C) {
    const uint32_t n = C.shapes[0], k = A.shapes[1];
#ifdef SIMPLER_HAVE_OPENBLAS
    const BlasLayout la = blas_layout(n, k, A.strides[0], A.strides[1]);
    const BlasLayout lc = blas_layout(n, n, C.strides[0], C.strides[1]);
    if (la.ok && lc.ok) {
        const std::scoped_lock lock(blas_mutex());
        blas_syrk(order_of(lc), trans(flipped(la, lc)), static_cast<int>(n), static_cast<int>(k), A.data<T>(), la.ld,
                  C.data<T>(), lc.ld);
        return;
    }
#endif
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            T s = 0;
            for (uint32_t q = 0; q < k; ++q) s += el<T>(A, i, q) * el<T>(A, j, q);
            el<T>(C, i, j) -= s;
        }
    }
}

// C = alpha·op(A)·op(B) + beta·C with op(A) m x k and op(B) k x n.
template <typename T>
void gemm_tiles(const Tensor& A, const Tensor& B, const Tensor& C, bool ta, bool tb, T alpha, T beta) {
    const uint32_t m = C.shapes[0], n = C.shapes[1], k = ta ? A.shapes[0] : A.shapes[1];
#ifdef SIMPLER_HAVE_OPENBLAS
    const BlasLayout la = blas_layout(A.shapes[0], A.shapes[1], A.strides[0], A.strides[1]);
    const BlasLayout lb = blas_layout(B.shapes[0], B.shapes[1], B.strides[0], B.strides[1]);
    const BlasLayout lc = blas_layout(m, n, C.strides[0], C.strides[1]);
    if (la.ok && lb.ok && lc.ok) {
        const std::scoped_lock lock(blas_mutex());
        blas_gemm(order_of(lc), trans(ta != flipped(la, lc)), trans(tb != flipped(lb, lc)), static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), alpha, A.data<T>(), la.ld, B.data<T>(), lb.ld, beta,
                  C.data<T>(), lc.ld);
        return;
    }
#endif
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            T s = 0;
            for (uint32_t q = 0; q < k; ++q)
                s += (ta ? el<T>(A, q, i) : el<T>(A, i, q)) * (tb ? el<T>(B, j, q) : el<T>(B, q, j));
            T& c = el<T>(C, i, j);
            c = beta == T{0} ? alpha * s : alpha * s + beta * c;
        }
    }
}

}  // namespace

int32_t std_potrf(const KernelArgs* a) {
    if (int32_t rc = check_potrf_args(a); rc != CHIP_OK) return rc;
    const Tensor& A = a->tensors[0];
    const int info = A.dtype == F64 ? potrf_tile<double>(A) : potrf_tile<float>(A);
    return info == 0 ? CHIP_OK : potrf_failed(a, info);
}

int32_t std_trsm(const KernelArgs* a) {
    if (int32_t rc = check_trsm_args(a); rc != CHIP_OK) return rc;
    if (a->tensors[0].dtype == F64)
        trsm_tiles<double>(a->tensors[0], a->tensors[1]);
    else
        trsm_tiles<float>(a->tensors[0], a->tensors[1]);
    return CHIP_OK;
}

int32_t std_syrk(const KernelArgs* a) {
    if (int32_t rc = check_syrk_args(a); rc != CHIP_OK) return rc;
    if (a->tensors[0].dtype == F64)
        syrk_tiles<double>(a->tensors[0], a->tensors[1]);
    else
        syrk_tiles<float>(a->tensors[0], a->tensors[1]);
    return CHIP_OK;
}

int32_t std_gemm(const KernelArgs* a) {
    if (int32_t rc = check_gemm_args(a); rc != CHIP_OK) return rc;
    const Tensor& A = a->tensors[0];
    const Tensor& B = a->tensors[1];
    const Tensor& C = a->tensors[2];
    const bool ta = a->scalars[0] == 1, tb = a->scalars[1] == 1;
    if (C.dtype == F64)
        gemm_tiles<double>(A, B, C, ta, tb, scalar_as_f64(a->scalars[2]), scalar_as_f64(a->scalars[3]));
    else
        gemm_tiles<float>(A, B, C, ta, tb, scalar_as_f32(a->scalars[2]), scalar_as_f32(a->scalars[3]));
    return CHIP_OK;
}

}  // namespace simpler::chip
