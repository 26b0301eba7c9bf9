// FLOAT64 through the standard kernels on a Chip in each way it moves bytes
// (OpenCL included where a device is found: PoCL's CPU device has
// cl_khr_fp64): values a FLOAT32 computation would round differently, so a
// kernel that narrowed to float anywhere fails the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/kernel_api.h"
#include "std_kernel_fixture.h"

using namespace simpler::chip;
using chip_test::view;
using std_kernel_test::IN;
using std_kernel_test::INOUT;
using std_kernel_test::OUT;
using std_kernel_test::setup_name;
using std_kernel_test::setups;

namespace {

constexpr DataType F64 = DataType::FLOAT64;

// 1 + i·2^-40-ish steps: distinct doubles that all round to the same few floats.
std::vector<double> fine_ramp(size_t n, double scale) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * (1.0 + static_cast<double>(i % 89) * 0x1p-40) - 0.5 * scale;
    return v;
}

ChipTensor dense64(const std::vector<double>& v, uint32_t rows, uint32_t cols) {
    return view(v.data(), v.size() * 8, 0, {rows, cols}, {cols, 1}, F64);
}

double at(const std::vector<double>& buf, const ChipTensor& t, uint32_t i, uint32_t j) {
    return buf[t.start_offset + uint64_t{i} * t.strides[0] + uint64_t{j} * t.strides[1]];
}

class StdKernelsF64 : public std_kernel_test::StdKernelFixture {};

}  // namespace

TEST_P(StdKernelsF64, VectorAddAndMulOfATransposedInputKeepDoublePrecision) {
    const uint32_t M = 13, N = 21;
    auto at_storage = fine_ramp(N * M, 3.0);  // [N, M] read as [M, N]
    auto b = fine_ramp(M * N, -1.0);
    std::vector<double> sum(M * N, 0.0), prod(M * N, 0.0);
    const ChipTensor av = view(at_storage.data(), at_storage.size() * 8, 0, {M, N}, {1, M}, F64);
    run("std.vector_add", {av, dense64(b, M, N), dense64(sum, M, N)}, {IN, IN, OUT});
    run("std.mul", {av, dense64(b, M, N), dense64(prod, M, N)}, {IN, IN, OUT});
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            const double x = at_storage[j * M + i], y = b[i * N + j];
            ASSERT_EQ(sum[i * N + j], x + y) << i << "," << j;
            ASSERT_EQ(prod[i * N + j], x * y) << i << "," << j;
        }
}

TEST_P(StdKernelsF64, AddScalarTakesAllSixtyFourBitsOfTheScalar) {
    auto a = fine_ramp(300, 1.0);
    std::vector<double> c(300, -1.0);
    const double s = 1.0 + 0x1p-45;  // not a float
    run("std.add_scalar",
        {view(a.data(), a.size() * 8, 1, {100}, {3}, F64), view(c.data(), c.size() * 8, 2, {100}, {3}, F64)}, {IN, OUT},
        {f64_as_scalar(s)});
    for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(c[2 + 3 * i], a[1 + 3 * i] + s) << i;
    EXPECT_EQ(c[0], -1.0);
    EXPECT_EQ(c[1], -1.0);
}

TEST_P(StdKernelsF64, SumNAddsInDoubleWithTheOutputAtItsPlace) {
    const uint32_t M = 9, N = 17;
    auto x1 = fine_ramp(M * N, 2.0), x2 = fine_ramp(M * N, -0.75);
    std::vector<double> out = fine_ramp(M * N, 0.125);
    const std::vector<double> before = fine_ramp(M * N, 0.125);
    run("std.sum_n", {dense64(x1, M, N), dense64(x2, M, N), dense64(out, M, N)}, {IN, IN, INOUT}, {2});
    for (size_t e = 0; e < out.size(); ++e) ASSERT_EQ(out[e], (x1[e] + before[e]) + x2[e]) << e;
}

TEST_P(StdKernelsF64, MatmulOfContiguousAndStridedViewsIsExactToDoubleRounding) {
    const uint32_t M = 19, K = 23, N = 11;
    auto A = fine_ramp(M * K, 0.5), B = fine_ramp(K * 2 * N, -0.25);
    std::vector<double> C(M * N, 0.0), C2(M * N, 0.0);
    const ChipTensor av = dense64(A, M, K);
    const ChipTensor bv = view(B.data(), B.size() * 8, 0, {K, N}, {2 * N, 1}, F64);   // a BLAS operand
    const ChipTensor bs = view(B.data(), B.size() * 8, 1, {K, N}, {2 * N, 2}, F64);  // every other column
    run("std.matmul", {av, bv, dense64(C, M, N)}, {IN, IN, OUT});
    run("std.matmul", {av, bs, dense64(C2, M, N)}, {IN, IN, OUT});
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            long double r = 0, r2 = 0;
            for (uint32_t k = 0; k < K; ++k) {
                r += static_cast<long double>(at(A, av, i, k)) * at(B, bv, k, j);
                r2 += static_cast<long double>(at(A, av, i, k)) * at(B, bs, k, j);
            }
            // A float computation of these sums is off by ~1e-7 of their size.
            ASSERT_NEAR(C[i * N + j], static_cast<double>(r), 1e-13) << i << "," << j;
            ASSERT_NEAR(C2[i * N + j], static_cast<double>(r2), 1e-13) << i << "," << j;
        }
}

TEST_P(StdKernelsF64, MixedOrUnsupportedDtypesFailNamingTheKernel) {
    std::vector<double> a(16, 1.0), c(16, 7.0);
    std::vector<float> f(16, 1.0f);
    const ChipTensor a64 = view(a.data(), 128, 0, {4, 4}, {4, 1}, F64);
    const ChipTensor f32 = view(f.data(), 64, 0, {4, 4}, {4, 1}, DataType::FLOAT32);
    RunResult r = try_run("std.matmul", {a64, f32, view(c.data(), 128, 0, {4, 4}, {4, 1}, F64)}, {IN, IN, OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("std.matmul: the three tensors' dtypes differ"), std::string::npos) << r.error;
    r = try_run("std.add_scalar", {a64, f32}, {IN, OUT}, {0});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("std.add_scalar: the two tensors' dtypes differ"), std::string::npos) << r.error;
    std::vector<int64_t> i64(16, 0);
    const ChipTensor iv = view(i64.data(), 128, 0, {4, 4}, {4, 1}, DataType::INT64);
    r = try_run("std.vector_add", {iv, iv, iv}, {IN, IN, OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("dtype INT64 is not supported (FLOAT32, FLOAT64, INT32)"), std::string::npos) << r.error;
    for (double v : c) EXPECT_EQ(v, 7.0);
}

INSTANTIATE_TEST_SUITE_P(Staging, StdKernelsF64, ::testing::ValuesIn(setups()), setup_name);
