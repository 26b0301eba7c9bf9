#include "simpler/chip/std_linalg_kernels.h"

#include <cmath>
#include <mutex>

#include "simpler/chip/dtype_bytes.h"
#include "simpler/chip/std_blas.h"
#include "simpler/chip/std_linalg_args.h"

namespace simpler::chip {
namespace {

// Element (i, j) of a 2-D view.
template <typename T>
T& el(const Tensor& t, uint32_t i, uint32_t j) noexcept {
    return base_ptr<T>(t)[t.start_offset + uint64_t{i} * t.strides[0] + uint64_t{j} * t.strides[1]];
}

// A = L·Lᵀ in place on A's lower triangle; 0, or LAPACK's info: j + 1 when
// the leading minor of order j + 1 is not positive definite.
template <typename T>
int potrf_tile(const Tensor& A) {
    const uint32_t n = A.shapes[0];
    if (have_blas()) {
        // Column-major LAPACK sees a row-major tile as its transpose: A's lower
        // triangle is then its upper one.
        if (const BlasLayout l = blas_layout(n, n, A.strides[0], A.strides[1]); l.ok) {
            const std::scoped_lock lock(blas_mutex());
            return lapack_potrf(l.transposed ? 'L' : 'U', static_cast<int>(n), A.data<T>(), l.ld);
        }
    }
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
    if (have_blas()) {
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
    }
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
    if (have_blas()) {
        const BlasLayout la = blas_layout(n, k, A.strides[0], A.strides[1]);
        const BlasLayout lc = blas_layout(n, n, C.strides[0], C.strides[1]);
        if (la.ok && lc.ok) {
            const std::scoped_lock lock(blas_mutex());
            blas_syrk(order_of(lc), trans(flipped(la, lc)), static_cast<int>(n), static_cast<int>(k), A.data<T>(),
                      la.ld, C.data<T>(), lc.ld);
            return;
        }
    }
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
    if (have_blas()) {
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
    }
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
    if (const char* e = blas_load_error()) return kernel_fail(a, "std.potrf: %s", e);
    const Tensor& A = a->tensors[0];
    const int info = A.dtype == F64 ? potrf_tile<double>(A) : potrf_tile<float>(A);
    return info == 0 ? CHIP_OK : potrf_failed(a, info);
}

int32_t std_trsm(const KernelArgs* a) {
    if (int32_t rc = check_trsm_args(a); rc != CHIP_OK) return rc;
    if (const char* e = blas_load_error()) return kernel_fail(a, "std.trsm: %s", e);
    if (a->tensors[0].dtype == F64)
        trsm_tiles<double>(a->tensors[0], a->tensors[1]);
    else
        trsm_tiles<float>(a->tensors[0], a->tensors[1]);
    return CHIP_OK;
}

int32_t std_syrk(const KernelArgs* a) {
    if (int32_t rc = check_syrk_args(a); rc != CHIP_OK) return rc;
    if (const char* e = blas_load_error()) return kernel_fail(a, "std.syrk: %s", e);
    if (a->tensors[0].dtype == F64)
        syrk_tiles<double>(a->tensors[0], a->tensors[1]);
    else
        syrk_tiles<float>(a->tensors[0], a->tensors[1]);
    return CHIP_OK;
}

int32_t std_gemm(const KernelArgs* a) {
    if (int32_t rc = check_gemm_args(a); rc != CHIP_OK) return rc;
    if (const char* e = blas_load_error()) return kernel_fail(a, "std.gemm: %s", e);
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
