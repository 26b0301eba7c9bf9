#include "simpler/chip/std_kernels.h"

#include <mutex>
#include <vector>

#include "simpler/chip/dtype_bytes.h"
#include "simpler/chip/std_blas.h"
#include "simpler/chip/std_linalg_kernels.h"

namespace simpler::chip {
namespace {

int32_t check_count(const KernelArgs* a, const char* name, uint32_t tensors, uint32_t scalars) {
    if (a->tensor_count != tensors || a->scalar_count < scalars)
        return kernel_fail(a, "%s takes %u tensors and %u scalars (got %u and %u)", name, tensors, scalars,
                           a->tensor_count, a->scalar_count);
    return CHIP_OK;
}

template <typename T, typename Op>
void binary_rows(const Tensor& x, const Tensor& y, const Tensor& z, Op op) {
    const Tensor* const ts[3] = {&x, &y, &z};
    T* px = base_ptr<T>(x);
    T* py = base_ptr<T>(y);
    T* pz = base_ptr<T>(z);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* s, uint32_t n) {
        const T* rx = px + base[0];
        const T* ry = py + base[1];
        T* rz = pz + base[2];
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
            for (uint32_t j = 0; j < n; ++j) rz[j] = op(rx[j], ry[j]);
        } else {
            for (uint32_t j = 0; j < n; ++j)
                rz[uint64_t{j} * s[2]] = op(rx[uint64_t{j} * s[0]], ry[uint64_t{j} * s[1]]);
        }
    });
}

template <typename Op>
int32_t binary_kernel(const KernelArgs* a, const char* name, Op op) {
    if (int32_t rc = check_count(a, name, 3, 0); rc != CHIP_OK) return rc;
    const Tensor& x = a->tensors[0];
    const Tensor& y = a->tensors[1];
    const Tensor& z = a->tensors[2];
    if (!same_shape(x, y) || !same_shape(x, z)) return kernel_fail(a, "%s: the three tensors' shapes differ", name);
    if (x.dtype != y.dtype || x.dtype != z.dtype) return kernel_fail(a, "%s: the three tensors' dtypes differ", name);
    if (x.dtype == F32)
        binary_rows<float>(x, y, z, op);
    else if (x.dtype == F64)
        binary_rows<double>(x, y, z, op);
    else if (x.dtype == I32)
        binary_rows<int32_t>(x, y, z, op);
    else
        return kernel_fail(a, "%s: dtype %s is not supported (FLOAT32, FLOAT64, INT32)", name, data_type_name(x.dtype));
    return CHIP_OK;
}

int32_t vector_add(const KernelArgs* a) {
    return binary_kernel(a, "std.vector_add", [](auto p, auto q) { return p + q; });
}

int32_t mul(const KernelArgs* a) {
    return binary_kernel(a, "std.mul", [](auto p, auto q) { return p * q; });
}

template <typename T>
void add_scalar_rows(const Tensor& x, const Tensor& z, T s) {
    const Tensor* const ts[2] = {&x, &z};
    const T* px = base_ptr<T>(x);
    T* pz = base_ptr<T>(z);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* st, uint32_t n) {
        for (uint32_t j = 0; j < n; ++j) pz[base[1] + uint64_t{j} * st[1]] = px[base[0] + uint64_t{j} * st[0]] + s;
    });
}

// std.add_scalar (x, z; s): z = x + s, s in the tensors' element type (a FLOAT32's
// bits in the low 32 bits of scalar 0, a FLOAT64's in all 64).
int32_t add_scalar(const KernelArgs* a) {
    if (int32_t rc = check_count(a, "std.add_scalar", 2, 1); rc != CHIP_OK) return rc;
    const Tensor& x = a->tensors[0];
    const Tensor& z = a->tensors[1];
    if (!same_shape(x, z)) return kernel_fail(a, "std.add_scalar: the two tensors' shapes differ");
    if (x.dtype != z.dtype) return kernel_fail(a, "std.add_scalar: the two tensors' dtypes differ");
    if (x.dtype == F32)
        add_scalar_rows<float>(x, z, scalar_as_f32(a->scalars[0]));
    else if (x.dtype == F64)
        add_scalar_rows<double>(x, z, scalar_as_f64(a->scalars[0]));
    else
        return kernel_fail(a, "std.add_scalar: dtype %s is not supported (FLOAT32, FLOAT64)", data_type_name(x.dtype));
    return CHIP_OK;
}

template <typename T>
void copy_rows(const Tensor& src, const Tensor& dst) {
    const Tensor* const ts[2] = {&src, &dst};
    const T* ps = base_ptr<T>(src);
    T* pd = base_ptr<T>(dst);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* st, uint32_t n) {
        for (uint32_t j = 0; j < n; ++j) pd[base[1] + uint64_t{j} * st[1]] = ps[base[0] + uint64_t{j} * st[0]];
    });
}

int32_t copy(const KernelArgs* a) {
    if (int32_t rc = check_count(a, "std.copy", 2, 0); rc != CHIP_OK) return rc;
    const Tensor& src = a->tensors[0];
    const Tensor& dst = a->tensors[1];
    if (!same_shape(src, dst) || src.dtype != dst.dtype)
        return kernel_fail(a, "std.copy: source and destination differ in shape or dtype");
    switch (src.element_size()) {
        case 1: copy_rows<uint8_t>(src, dst); break;
        case 2: copy_rows<uint16_t>(src, dst); break;
        case 4: copy_rows<uint32_t>(src, dst); break;
        case 8: copy_rows<uint64_t>(src, dst); break;
        default: return kernel_fail(a, "std.copy: unsupported element size %u", src.element_size());
    }
    return CHIP_OK;
}

// std.sum_n's element types: how an element widens into the accumulator and
// narrows back. FLOAT16 / BFLOAT16 accumulate in float and round once (to
// nearest even); INT32 wraps (modulo 2^32).
struct SumF32 {
    using Elem = float;
    using Acc = float;
    static Acc widen(Elem e) noexcept { return e; }
    static Elem narrow(Acc a) noexcept { return a; }
};
struct SumF64 {
    using Elem = double;
    using Acc = double;
    static Acc widen(Elem e) noexcept { return e; }
    static Elem narrow(Acc a) noexcept { return a; }
};
struct SumI32 {
    using Elem = int32_t;
    using Acc = int64_t;  // 31 INT32 terms cannot overflow it; narrow keeps the low 32 bits
    static Acc widen(Elem e) noexcept { return e; }
    static Elem narrow(Acc a) noexcept { return static_cast<int32_t>(static_cast<uint32_t>(a)); }
};
struct SumF16 {
    using Elem = uint16_t;
    using Acc = float;
    static Acc widen(Elem e) noexcept { return f16_to_float(e); }
    static Elem narrow(Acc a) noexcept { return float_to_f16(a); }
};
struct SumBF16 {
    using Elem = uint16_t;
    using Acc = float;
    static Acc widen(Elem e) noexcept { return bf16_to_float(e); }
    static Elem narrow(Acc a) noexcept { return float_to_bf16(a); }
};

// Element offset of the first element of the row at outer index idx[0..inner).
uint64_t row_start(const Tensor& t, const uint32_t* idx, uint32_t inner) noexcept {
    uint64_t e = t.start_offset;
    for (uint32_t i = 0; i < inner; ++i) e += uint64_t{idx[i]} * t.strides[i];
    return e;
}

// Elements per accumulator block (on the stack).
constexpr uint32_t SUM_BLOCK = 1024;

// One block of a row onto, into and out of the accumulator; the unit-stride
// case spelled out (it vectorizes; GCC 12's own stride versioning of these
// loops trips a false -Wuninitialized at -O3).
template <typename S>
void add_row(typename S::Acc* acc, const typename S::Elem* row, uint32_t len, uint64_t stride) noexcept {
    if (stride == 1) {
        for (uint32_t j = 0; j < len; ++j) acc[j] += S::widen(row[j]);
    } else {
        for (uint32_t j = 0; j < len; ++j) acc[j] += S::widen(row[j * stride]);
    }
}

template <typename S>
void load_row(typename S::Acc* acc, const typename S::Elem* row, uint32_t len, uint64_t stride) noexcept {
    if (stride == 1) {
        for (uint32_t j = 0; j < len; ++j) acc[j] = S::widen(row[j]);
    } else {
        for (uint32_t j = 0; j < len; ++j) acc[j] = S::widen(row[j * stride]);
    }
}

template <typename S>
void store_row(typename S::Elem* row, const typename S::Acc* acc, uint32_t len, uint64_t stride) noexcept {
    if (stride == 1) {
        for (uint32_t j = 0; j < len; ++j) row[j] = S::narrow(acc[j]);
    } else {
        for (uint32_t j = 0; j < len; ++j) row[j * stride] = S::narrow(acc[j]);
    }
}

// out = terms[0] + terms[1] + ... + terms[n-1], left to right (the first term
// loaded, the rest added), row by row in blocks of SUM_BLOCK elements. `out`
// may be one of the terms: each block reads every term before it is stored.
template <typename S>
void sum_rows(const Tensor* const* terms, uint32_t nterms, const Tensor& out) {
    using Elem = typename S::Elem;
    using Acc = typename S::Acc;
    const uint32_t nd = out.ndims < 1 ? 1 : (out.ndims > MAX_TENSOR_DIMS ? MAX_TENSOR_DIMS : out.ndims);
    const uint32_t inner = nd - 1;
    const uint32_t n = out.shapes[inner];
    Elem* po = base_ptr<Elem>(out);
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    Acc acc[SUM_BLOCK];
    for (;;) {
        const uint64_t ob = row_start(out, idx, inner);
        const uint64_t os = out.strides[inner];
        for (uint32_t j0 = 0; j0 < n; j0 += SUM_BLOCK) {
            const uint32_t len = n - j0 < SUM_BLOCK ? n - j0 : SUM_BLOCK;
            for (uint32_t q = 0; q < nterms; ++q) {
                const Tensor& x = *terms[q];
                const Elem* px = base_ptr<const Elem>(x) + row_start(x, idx, inner);
                const uint64_t xs = x.strides[inner];
                if (q == 0)
                    load_row<S>(acc, px + j0 * xs, len, xs);
                else
                    add_row<S>(acc, px + j0 * xs, len, xs);
            }
            store_row<S>(po + ob + j0 * os, acc, len, os);
        }
        uint32_t d = inner;
        while (d > 0) {
            --d;
            if (++idx[d] < out.shapes[d]) break;
            idx[d] = 0;
            if (d == 0) return;
        }
        if (inner == 0) return;
    }
}

// std.sum_n (x_1, ..., x_k, out; [p]): out = x_1 + ... + x_k. With scalar 0
// p in [1, k + 1], out's own value is a term too, the p-th:
// out = x_1 + ... + x_{p-1} + out + x_p + ... + x_k (out tagged INOUT); p = 0
// or no scalar: out is only written.
int32_t sum_n(const KernelArgs* a) {
    if (a->tensor_count < 2 || a->scalar_count > 1)
        return kernel_fail(a,
                           "std.sum_n takes k >= 1 input tensors, one output and at most 1 scalar (got %u tensors "
                           "and %u scalars)",
                           a->tensor_count, a->scalar_count);
    const uint32_t k = a->tensor_count - 1;
    const Tensor& out = a->tensors[k];
    const uint64_t p = a->scalar_count == 1 ? a->scalars[0] : 0;
    if (p > uint64_t{k} + 1)
        return kernel_fail(a, "std.sum_n: the output's place among the terms is %llu, past the %u terms",
                           static_cast<unsigned long long>(p), k + 1);
    const Tensor* terms[CORE_MAX_TENSOR_ARGS];
    uint32_t nterms = 0;
    for (uint32_t q = 0; q < k; ++q) {
        const Tensor& x = a->tensors[q];
        if (!same_shape(x, out)) return kernel_fail(a, "std.sum_n: input %u's shape differs from the output's", q);
        if (x.dtype != out.dtype)
            return kernel_fail(a, "std.sum_n: input %u is %s, the output %s", q, data_type_name(x.dtype),
                               data_type_name(out.dtype));
        if (p == q + 1) terms[nterms++] = &out;
        terms[nterms++] = &x;
    }
    if (p == uint64_t{k} + 1) terms[nterms++] = &out;
    switch (out.dtype) {
        case F32: sum_rows<SumF32>(terms, nterms, out); break;
        case F64: sum_rows<SumF64>(terms, nterms, out); break;
        case I32: sum_rows<SumI32>(terms, nterms, out); break;
        case F16: sum_rows<SumF16>(terms, nterms, out); break;
        case BF16: sum_rows<SumBF16>(terms, nterms, out); break;
        default:
            return kernel_fail(a, "std.sum_n: dtype %s is not supported (FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT32)",
                               data_type_name(out.dtype));
    }
    return CHIP_OK;
}

// C = A @ B over views of T: through the serial OpenBLAS's gemm when every view
// reads as a BLAS operand (blas_layout; C not transposed), else the portable
// loop, which takes any strides.
template <typename T>
void matmul_views(const Tensor& A, const Tensor& B, const Tensor& C) {
    const uint32_t M = A.shapes[0], K = A.shapes[1], N = B.shapes[1];
    const T* pa = A.data<T>();
    const T* pb = B.data<T>();
    T* pc = C.data<T>();
    if (have_blas()) {
        const BlasLayout la = blas_layout(M, K, A.strides[0], A.strides[1]);
        const BlasLayout lb = blas_layout(K, N, B.strides[0], B.strides[1]);
        const BlasLayout lc = blas_layout(M, N, C.strides[0], C.strides[1]);
        if (la.ok && lb.ok && lc.ok && !lc.transposed) {
            const std::scoped_lock lock(blas_mutex());
            blas_gemm(CblasRowMajor, trans(la.transposed), trans(lb.transposed), static_cast<int>(M),
                      static_cast<int>(N), static_cast<int>(K), T{1}, pa, la.ld, pb, lb.ld, T{0}, pc, lc.ld);
            return;
        }
    }
    const uint64_t as0 = A.strides[0], as1 = A.strides[1], bs0 = B.strides[0], bs1 = B.strides[1];
    const uint64_t cs0 = C.strides[0], cs1 = C.strides[1];
    std::vector<T> acc(N);
    for (uint32_t i = 0; i < M; ++i) {
        for (uint32_t j = 0; j < N; ++j) acc[j] = T{0};
        for (uint32_t k = 0; k < K; ++k) {
            const T av = pa[i * as0 + k * as1];
            const T* b = pb + k * bs0;
            if (bs1 == 1) {
                for (uint32_t j = 0; j < N; ++j) acc[j] += av * b[j];
            } else {
                for (uint32_t j = 0; j < N; ++j) acc[j] += av * b[j * bs1];
            }
        }
        for (uint32_t j = 0; j < N; ++j) pc[i * cs0 + j * cs1] = acc[j];
    }
}

// std.matmul (A, B, C): C = A @ B, FLOAT32 or FLOAT64, the three of one dtype.
int32_t matmul(const KernelArgs* a) {
    if (int32_t rc = check_count(a, "std.matmul", 3, 0); rc != CHIP_OK) return rc;
    if (const char* e = blas_load_error()) return kernel_fail(a, "std.matmul: %s", e);
    const Tensor& A = a->tensors[0];
    const Tensor& B = a->tensors[1];
    const Tensor& C = a->tensors[2];
    if (A.ndims != 2 || B.ndims != 2 || C.ndims != 2) return kernel_fail(a, "std.matmul: 2-D tensors only");
    if (A.dtype != B.dtype || A.dtype != C.dtype) return kernel_fail(a, "std.matmul: the three tensors' dtypes differ");
    if (A.dtype != F32 && A.dtype != F64)
        return kernel_fail(a, "std.matmul: dtype %s is not supported (FLOAT32, FLOAT64)", data_type_name(A.dtype));
    const uint32_t M = A.shapes[0], K = A.shapes[1], N = B.shapes[1];
    if (B.shapes[0] != K || C.shapes[0] != M || C.shapes[1] != N)
        return kernel_fail(a, "std.matmul: shapes [%u,%u] @ [%u,%u] -> [%u,%u] do not agree", M, K, B.shapes[0], N,
                           C.shapes[0], C.shapes[1]);
    if (A.dtype == F32)
        matmul_views<float>(A, B, C);
    else
        matmul_views<double>(A, B, C);
    return CHIP_OK;
}

const LibraryEntry ENTRIES[] = {
    kernel_entry("std.vector_add", vector_add), kernel_entry("std.mul", mul),
    kernel_entry("std.add_scalar", add_scalar), kernel_entry("std.copy", copy),
    kernel_entry("std.matmul", matmul),         kernel_entry("std.sum_n", sum_n),
    kernel_entry("std.potrf", std_potrf),       kernel_entry("std.trsm", std_trsm),
    kernel_entry("std.syrk", std_syrk),         kernel_entry("std.gemm", std_gemm),
};

}  // namespace

const LibraryTable& standard_kernel_table() noexcept {
    static const LibraryTable table{CHIP_ABI_VERSION, sizeof(ENTRIES) / sizeof(ENTRIES[0]), ENTRIES};
    return table;
}

}  // namespace simpler::chip
