#include "simpler/chip/std_linalg_args.h"

#include "simpler/chip/dtype_bytes.h"

namespace simpler::chip {
namespace {

// `tensors` 2-D tensors of one dtype, FLOAT32 or FLOAT64, and exactly `scalars` scalars.
int32_t check_tiles(const KernelArgs* a, const char* name, uint32_t tensors, uint32_t scalars) {
    if (a->tensor_count != tensors || a->scalar_count != scalars)
        return kernel_fail(a, "%s takes %u tensors and %u scalars (got %u and %u)", name, tensors, scalars,
                           a->tensor_count, a->scalar_count);
    const uint8_t dtype = a->tensors[0].dtype;
    for (uint32_t i = 0; i < tensors; ++i) {
        if (a->tensors[i].ndims != 2) return kernel_fail(a, "%s: tensor %u is not 2-D", name, i);
        if (a->tensors[i].dtype != dtype)
            return kernel_fail(a, "%s: tensor %u is %s, tensor 0 %s", name, i, data_type_name(a->tensors[i].dtype),
                               data_type_name(dtype));
    }
    if (dtype != F32 && dtype != F64)
        return kernel_fail(a, "%s: dtype %s is not supported (FLOAT32, FLOAT64)", name, data_type_name(dtype));
    return CHIP_OK;
}

int32_t check_square(const KernelArgs* a, const char* name, const char* what, const Tensor& t) {
    if (t.shapes[0] != t.shapes[1])
        return kernel_fail(a, "%s: %s is %u x %u, not square", name, what, t.shapes[0], t.shapes[1]);
    return CHIP_OK;
}

}  // namespace

int32_t check_potrf_args(const KernelArgs* a) {
    if (int32_t rc = check_tiles(a, "std.potrf", 1, 0); rc != CHIP_OK) return rc;
    return check_square(a, "std.potrf", "the tile", a->tensors[0]);
}

int32_t check_trsm_args(const KernelArgs* a) {
    if (int32_t rc = check_tiles(a, "std.trsm", 2, 0); rc != CHIP_OK) return rc;
    const Tensor& L = a->tensors[0];
    const Tensor& B = a->tensors[1];
    if (int32_t rc = check_square(a, "std.trsm", "L", L); rc != CHIP_OK) return rc;
    if (B.shapes[1] != L.shapes[0])
        return kernel_fail(a, "std.trsm: B is %u x %u, L %u x %u: B's columns must be L's order", B.shapes[0],
                           B.shapes[1], L.shapes[0], L.shapes[1]);
    return CHIP_OK;
}

int32_t check_syrk_args(const KernelArgs* a) {
    if (int32_t rc = check_tiles(a, "std.syrk", 2, 0); rc != CHIP_OK) return rc;
    const Tensor& A = a->tensors[0];
    const Tensor& C = a->tensors[1];
    if (int32_t rc = check_square(a, "std.syrk", "C", C); rc != CHIP_OK) return rc;
    if (A.shapes[0] != C.shapes[0])
        return kernel_fail(a, "std.syrk: A is %u x %u, C %u x %u: A's rows must be C's order", A.shapes[0], A.shapes[1],
                           C.shapes[0], C.shapes[1]);
    return CHIP_OK;
}

int32_t check_gemm_args(const KernelArgs* a) {
    if (int32_t rc = check_tiles(a, "std.gemm", 3, 4); rc != CHIP_OK) return rc;
    const Tensor& A = a->tensors[0];
    const Tensor& B = a->tensors[1];
    const Tensor& C = a->tensors[2];
    const uint64_t ta = a->scalars[0], tb = a->scalars[1];
    if (ta > 1 || tb > 1)
        return kernel_fail(a, "std.gemm: the transpose flags (scalars 0 and 1) must be 0 or 1 (got %llu and %llu)",
                           static_cast<unsigned long long>(ta), static_cast<unsigned long long>(tb));
    const uint32_t m = ta ? A.shapes[1] : A.shapes[0], ka = ta ? A.shapes[0] : A.shapes[1];
    const uint32_t kb = tb ? B.shapes[1] : B.shapes[0], n = tb ? B.shapes[0] : B.shapes[1];
    if (ka != kb || C.shapes[0] != m || C.shapes[1] != n)
        return kernel_fail(a, "std.gemm: op(A) [%u,%u] @ op(B) [%u,%u] -> C [%u,%u] do not agree", m, ka, kb, n,
                           C.shapes[0], C.shapes[1]);
    return CHIP_OK;
}

int32_t potrf_failed(const KernelArgs* a, int info) {
    const Tensor& A = a->tensors[0];
    const char* routine = A.dtype == F64 ? "dpotrf" : "spotrf";
    if (info > 0)
        return kernel_fail(a,
                           "std.potrf: the %u x %u tile is not positive definite: LAPACK %s info %d (its leading "
                           "minor of order %d is not)",
                           A.shapes[0], A.shapes[1], routine, info, info);
    return kernel_fail(a, "std.potrf: LAPACK %s refused its argument %d", routine, -info);
}

}  // namespace simpler::chip
