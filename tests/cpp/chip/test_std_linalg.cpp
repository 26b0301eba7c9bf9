// std.potrf, std.trsm, std.syrk and std.gemm on a Chip (std_linalg_kernels.h;
// on an OpenCL device, clc/clc_linalg_kernels.h), FLOAT32 and FLOAT64, each
// operand laid out three ways: a row-major block of a
// wider buffer and a column-major one (both BLAS operands, in either CBLAS
// order) and every other column (a non-unit inner stride: the portable loop).
// Each result is checked against a reference computed here, and every element
// of a written buffer outside what the kernel may write is checked unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "simpler/chip/kernel_api.h"
#include "std_kernel_fixture.h"

using namespace simpler::chip;
using std_kernel_test::IN;
using std_kernel_test::INOUT;

namespace {

enum class Lay { ROW, COL, STRIDED };
const char* lay_name(Lay l) { return l == Lay::ROW ? "row" : l == Lay::COL ? "col" : "strided"; }

constexpr double SENTINEL = -77.0;

// A logical r x c matrix in a buffer of its own, laid out as `lay`, every other
// element of the buffer SENTINEL.
template <typename T>
struct Mat {
    uint32_t r, c;
    std::vector<T> buf;
    ChipTensor v{};

    Mat(uint32_t rows, uint32_t cols, Lay lay) : r(rows), c(cols) {
        uint32_t s0 = 0, s1 = 0;
        uint64_t start = 0, size = 0;
        if (lay == Lay::ROW) {
            s0 = cols + 3, s1 = 1, start = uint64_t{2} * s0 + 1, size = uint64_t{rows + 3} * s0;
        } else if (lay == Lay::COL) {
            s0 = 1, s1 = rows + 5, start = 4, size = uint64_t{cols + 1} * s1;
        } else {
            s0 = 2 * cols + 1, s1 = 2, start = 1, size = uint64_t{rows + 1} * s0;
        }
        buf.assign(size, static_cast<T>(SENTINEL));
        v.buffer.addr = reinterpret_cast<uint64_t>(buf.data());
        v.buffer.size = buf.size() * sizeof(T);
        v.start_offset = start;
        v.ndims = 2;
        v.shapes[0] = rows, v.shapes[1] = cols;
        v.strides[0] = s0, v.strides[1] = s1;
        v.dtype = static_cast<uint8_t>(sizeof(T) == 8 ? DataType::FLOAT64 : DataType::FLOAT32);
    }
    T& at(uint32_t i, uint32_t j) {
        return buf[v.start_offset + uint64_t{i} * v.strides[0] + uint64_t{j} * v.strides[1]];
    }
    const T& at(uint32_t i, uint32_t j) const {
        return buf[v.start_offset + uint64_t{i} * v.strides[0] + uint64_t{j} * v.strides[1]];
    }
    // Every buffer element that is not (i, j) of the view with writable(i, j) is SENTINEL still.
    template <typename F>
    void expect_outside_unchanged(F&& writable) {
        std::vector<bool> inside(buf.size(), false);
        for (uint32_t i = 0; i < r; ++i)
            for (uint32_t j = 0; j < c; ++j)
                if (writable(i, j))
                    inside[v.start_offset + uint64_t{i} * v.strides[0] + uint64_t{j} * v.strides[1]] = true;
        for (size_t e = 0; e < buf.size(); ++e) {
            if (!inside[e]) {
                ASSERT_EQ(buf[e], static_cast<T>(SENTINEL)) << "element " << e << " written";
            }
        }
    }
};

template <typename T>
void fill(Mat<T>& m, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (uint32_t i = 0; i < m.r; ++i)
        for (uint32_t j = 0; j < m.c; ++j) m.at(i, j) = static_cast<T>(d(rng));
}

// An SPD matrix's lower triangle (G·Gᵀ + n·I); its strict upper triangle SENTINEL.
template <typename T>
void fill_spd(Mat<T>& m, std::mt19937_64& rng) {
    const uint32_t n = m.r;
    std::vector<double> g(n * n);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (double& x : g) x = d(rng);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j <= i; ++j) {
            double s = i == j ? n : 0.0;
            for (uint32_t k = 0; k < n; ++k) s += g[i * n + k] * g[j * n + k];
            m.at(i, j) = static_cast<T>(s);
        }
}

template <typename T>
double tol() {
    return std::is_same_v<T, double> ? 1e-11 : 2e-4;
}

uint64_t bits(float f) { return f32_as_scalar(f); }
uint64_t bits(double d) { return f64_as_scalar(d); }

struct Case {
    std::string dtype;
    Lay a, b;
    DeviceKind device;
};

// Every layout pair in each dtype on the simulated chip (BLAS and loops) and,
// where an OpenCL device is found, on it (the OpenCL C forms).
std::vector<Case> cases() {
    std::vector<Case> out;
    std::vector<DeviceKind> devices{DeviceKind::SIMULATED};
    if (opencl_tests_run()) devices.push_back(DeviceKind::OPENCL);
    for (DeviceKind device : devices)
        for (const char* d : {"FLOAT32", "FLOAT64"})
            for (Lay a : {Lay::ROW, Lay::COL, Lay::STRIDED})
                for (Lay b : {Lay::ROW, Lay::COL, Lay::STRIDED}) out.push_back({d, a, b, device});
    return out;
}

class StdLinalg : public ::testing::TestWithParam<Case> {
protected:
    Chip chip{
        std_kernel_test::config(StagingMode::STAGE, GetParam().device == DeviceKind::SIMULATED, GetParam().device)};
    std::mt19937_64 rng{20261204};

    RunResult run(const char* orch, std::initializer_list<ChipTensor> tensors,
                  std::initializer_list<TensorArgType> tags, std::initializer_list<uint64_t> scalars = {}) {
        return std_kernel_test::run_on(chip, orch, tensors, tags, scalars);
    }

    template <typename T>
    void potrf() {
        const uint32_t n = 29;
        Mat<T> a(n, n, GetParam().a);
        fill_spd(a, rng);
        const Mat<T> before = a;
        const RunResult r = run("std.potrf", {a.v}, {INOUT});
        ASSERT_TRUE(r.ok) << r.error;
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j <= i; ++j) {
                long double s = 0;
                for (uint32_t k = 0; k <= j; ++k) s += static_cast<long double>(a.at(i, k)) * a.at(j, k);
                const double want = static_cast<double>(before.at(i, j));
                ASSERT_NEAR(static_cast<double>(s), want, tol<T>() * n) << i << "," << j;
            }
        a.expect_outside_unchanged([](uint32_t i, uint32_t j) { return j <= i; });
    }

    template <typename T>
    void trsm() {
        const uint32_t n = 23, m = 17;
        Mat<T> l(n, n, GetParam().a), b(m, n, GetParam().b);
        fill_spd(l, rng);  // a well-conditioned lower triangle
        fill(b, rng);
        const Mat<T> b0 = b;
        const RunResult r = run("std.trsm", {l.v, b.v}, {IN, INOUT});
        ASSERT_TRUE(r.ok) << r.error;
        for (uint32_t i = 0; i < m; ++i)  // X·Lᵀ = B0
            for (uint32_t j = 0; j < n; ++j) {
                long double s = 0;
                for (uint32_t k = 0; k <= j; ++k) s += static_cast<long double>(b.at(i, k)) * l.at(j, k);
                ASSERT_NEAR(static_cast<double>(s), static_cast<double>(b0.at(i, j)), tol<T>()) << i << "," << j;
            }
        b.expect_outside_unchanged([](uint32_t, uint32_t) { return true; });
    }

    template <typename T>
    void syrk() {
        const uint32_t n = 19, k = 26;
        Mat<T> a(n, k, GetParam().a), c(n, n, GetParam().b);
        fill(a, rng);
        fill(c, rng);
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = i + 1; j < n; ++j) c.at(i, j) = static_cast<T>(SENTINEL);
        const Mat<T> c0 = c;
        const RunResult r = run("std.syrk", {a.v, c.v}, {IN, INOUT});
        ASSERT_TRUE(r.ok) << r.error;
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j <= i; ++j) {
                long double s = c0.at(i, j);
                for (uint32_t q = 0; q < k; ++q) s -= static_cast<long double>(a.at(i, q)) * a.at(j, q);
                ASSERT_NEAR(c.at(i, j), static_cast<double>(s), tol<T>() * k) << i << "," << j;
            }
        c.expect_outside_unchanged([](uint32_t i, uint32_t j) { return j <= i; });
    }

    template <typename T>
    void gemm(bool ta, bool tb, T alpha, T beta) {
        const uint32_t m = 14, n = 11, k = 21;
        Mat<T> a(ta ? k : m, ta ? m : k, GetParam().a), b(tb ? n : k, tb ? k : n, GetParam().b);
        Mat<T> c(m, n, GetParam().a == Lay::COL ? Lay::ROW : Lay::COL);
        fill(a, rng);
        fill(b, rng);
        fill(c, rng);
        if (beta == T{0})
            for (uint32_t i = 0; i < m; ++i)
                for (uint32_t j = 0; j < n; ++j) c.at(i, j) = std::numeric_limits<T>::quiet_NaN();  // not read
        const Mat<T> c0 = c;
        const RunResult r = run("std.gemm", {a.v, b.v, c.v}, {IN, IN, INOUT}, {ta, tb, bits(alpha), bits(beta)});
        ASSERT_TRUE(r.ok) << r.error;
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j) {
                long double s = 0;
                for (uint32_t q = 0; q < k; ++q)
                    s += static_cast<long double>(ta ? a.at(q, i) : a.at(i, q)) * (tb ? b.at(j, q) : b.at(q, j));
                long double want = alpha * s;
                if (beta != T{0}) want += beta * static_cast<long double>(c0.at(i, j));
                ASSERT_NEAR(c.at(i, j), static_cast<double>(want), tol<T>() * k) << i << "," << j;
            }
        c.expect_outside_unchanged([](uint32_t, uint32_t) { return true; });
    }
};

// std.potrf has one operand: its layouts alone.
class StdPotrf : public StdLinalg {};
std::vector<Case> one_operand_cases() {
    std::vector<Case> out;
    for (const Case& c : cases())
        if (c.b == Lay::ROW) out.push_back(c);
    return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& p) {
    return std::string(p.param.device == DeviceKind::OPENCL ? "OpenCl_" : "") + p.param.dtype + "_" +
           lay_name(p.param.a) + "_" + lay_name(p.param.b);
}

}  // namespace

TEST_P(StdPotrf, FactorsTheLowerTriangleAndLeavesTheRestAlone) {
    if (GetParam().dtype == "FLOAT64")
        potrf<double>();
    else
        potrf<float>();
}

TEST_P(StdLinalg, TrsmSolvesXTimesLTransposedForEveryRow) {
    if (GetParam().dtype == "FLOAT64")
        trsm<double>();
    else
        trsm<float>();
}

TEST_P(StdLinalg, SyrkUpdatesTheLowerTriangleOnly) {
    if (GetParam().dtype == "FLOAT64")
        syrk<double>();
    else
        syrk<float>();
}

TEST_P(StdLinalg, GemmWithEachTransposeAndScale) {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            SCOPED_TRACE(std::string("ta ") + (ta ? "1" : "0") + ", tb " + (tb ? "1" : "0"));
            if (GetParam().dtype == "FLOAT64") {
                gemm<double>(ta, tb, -1.0, 1.0);
                gemm<double>(ta, tb, 0.5, 0.0);
            } else {
                gemm<float>(ta, tb, -1.0f, 1.0f);
                gemm<float>(ta, tb, 0.5f, 0.0f);
            }
        }
}

INSTANTIATE_TEST_SUITE_P(Layouts, StdLinalg, ::testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Layouts, StdPotrf, ::testing::ValuesIn(one_operand_cases()), case_name);

namespace {
class StdLinalgRefusals : public std_kernel_test::StdKernelFixture {};

ChipTensor tile(std::vector<double>& buf, uint32_t ld, uint64_t start, uint32_t r, uint32_t c) {
    ChipTensor t{};
    t.buffer.addr = reinterpret_cast<uint64_t>(buf.data());
    t.buffer.size = buf.size() * 8;
    t.start_offset = start;
    t.ndims = 2;
    t.shapes[0] = r, t.shapes[1] = c;
    t.strides[0] = ld, t.strides[1] = 1;
    t.dtype = static_cast<uint8_t>(DataType::FLOAT64);
    return t;
}

void expect_failure(const RunResult& r, const std::string& words) {
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find(words), std::string::npos) << r.error;
}
}  // namespace

TEST_P(StdLinalgRefusals, ANonPositiveDefiniteTileFailsWithLapacksInfo) {
    // A 16 x 16 buffer; its tile at rows 4..7, columns 8..11 is I except element (2, 2) = -1.
    std::vector<double> buf(256, 0.0);
    for (uint32_t i = 0; i < 4; ++i) buf[(4 + i) * 16 + 8 + i] = i == 2 ? -1.0 : 1.0;
    const RunResult r = try_run("std.potrf", {tile(buf, 16, 4 * 16 + 8, 4, 4)}, {INOUT});
    expect_failure(r,
                   "kernel 'std.potrf' (task 0) failed: std.potrf: the 4 x 4 tile is not positive definite: LAPACK "
                   "dpotrf info 3 (its leading minor of order 3 is not)");
}

TEST_P(StdLinalgRefusals, ShapesDtypesAndFlagsThatDoNotAgreeFailNamingTheKernel) {
    std::vector<double> buf(256, 1.0);
    std::vector<float> f(256, 1.0f);
    ChipTensor f32 = tile(buf, 16, 0, 4, 4);
    f32.buffer.addr = reinterpret_cast<uint64_t>(f.data());
    f32.buffer.size = f.size() * 4;
    f32.dtype = static_cast<uint8_t>(DataType::FLOAT32);
    expect_failure(try_run("std.potrf", {tile(buf, 16, 0, 4, 3)}, {INOUT}), "std.potrf: the tile is 4 x 3, not square");
    expect_failure(try_run("std.trsm", {tile(buf, 16, 0, 4, 4), tile(buf, 16, 128, 5, 3)}, {IN, INOUT}),
                   "std.trsm: B is 5 x 3, L 4 x 4: B's columns must be L's order");
    expect_failure(try_run("std.syrk", {tile(buf, 16, 0, 3, 4), tile(buf, 16, 128, 4, 4)}, {IN, INOUT}),
                   "std.syrk: A is 3 x 4, C 4 x 4: A's rows must be C's order");
    expect_failure(
        try_run("std.gemm", {tile(buf, 16, 0, 4, 4), f32, tile(buf, 16, 128, 4, 4)}, {IN, IN, INOUT}, {0, 1, 0, 0}),
        "std.gemm: tensor 1 is FLOAT32, tensor 0 FLOAT64");
    expect_failure(try_run("std.gemm", {tile(buf, 16, 0, 4, 5), tile(buf, 16, 8, 4, 4), tile(buf, 16, 128, 4, 4)},
                           {IN, IN, INOUT}, {0, 0, 0, 0}),
                   "std.gemm: op(A) [4,5] @ op(B) [4,4] -> C [4,4] do not agree");
    expect_failure(try_run("std.gemm", {tile(buf, 16, 0, 4, 4), tile(buf, 16, 8, 4, 4), tile(buf, 16, 128, 4, 4)},
                           {IN, IN, INOUT}, {2, 0, 0, 0}),
                   "std.gemm: the transpose flags (scalars 0 and 1) must be 0 or 1 (got 2 and 0)");
    expect_failure(try_run("std.gemm", {tile(buf, 16, 0, 4, 4), tile(buf, 16, 8, 4, 4), tile(buf, 16, 128, 4, 4)},
                           {IN, IN, INOUT}, {0, 1}),
                   "std.gemm takes 3 tensors and 4 scalars (got 3 and 2)");
    for (double v : buf) ASSERT_EQ(v, 1.0);  // nothing ran
}

INSTANTIATE_TEST_SUITE_P(Staging, StdLinalgRefusals, ::testing::ValuesIn(std_kernel_test::setups()),
                         std_kernel_test::setup_name);
