// The standard kernels through their standard orchestrations on a Chip, each
// against a reference computed here: contiguous, transposed (strided) and
// sub-region views, in both staging modes. Elements outside an output view
// stay untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/chip.h"
#include "simpler/chip/kernel_api.h"
#include "std_kernel_fixture.h"

using namespace simpler::chip;
using chip_test::dense;
using chip_test::view;
using std_kernel_test::config;
using std_kernel_test::IN;
using std_kernel_test::OUT;
using std_kernel_test::setup_name;
using std_kernel_test::setups;

namespace {

std::vector<float> ramp(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 97) - 40);
    return v;
}

// Value of element (i, j) of a 2-D view over `buf`.
float at(const std::vector<float>& buf, const ChipTensor& t, uint32_t i, uint32_t j) {
    return buf[t.start_offset + uint64_t{i} * t.strides[0] + uint64_t{j} * t.strides[1]];
}

class StdKernels : public std_kernel_test::StdKernelFixture {};

}  // namespace

TEST_P(StdKernels, VectorAddOfContiguousMatrices) {
    const uint32_t M = 37, N = 19;
    auto a = ramp(M * N, 0.5f), b = ramp(M * N, -1.25f);
    std::vector<float> c(M * N, 0.0f);
    run("std.vector_add", {dense(a, {M, N}), dense(b, {M, N}), dense(c, {M, N})}, {IN, IN, OUT});
    for (size_t i = 0; i < c.size(); ++i) ASSERT_FLOAT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(StdKernels, VectorAddOfATransposedInput) {
    const uint32_t M = 13, N = 21;
    auto a_storage = ramp(N * M, 1.0f);  // [N, M] row-major, read as [M, N] with strides (1, M)
    auto b = ramp(M * N, 2.0f);
    std::vector<float> c(M * N, 0.0f);
    const ChipTensor at_view = view(a_storage.data(), a_storage.size() * 4, 0, {M, N}, {1, M});
    run("std.vector_add", {at_view, dense(b, {M, N}), dense(c, {M, N})}, {IN, IN, OUT});
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) ASSERT_FLOAT_EQ(c[i * N + j], a_storage[j * M + i] + b[i * N + j]);
}

TEST_P(StdKernels, MulWritesOnlyItsSubRegion) {
    const uint32_t R = 16, C = 16;
    auto a = ramp(R * C, 0.25f), b = ramp(R * C, 3.0f);
    std::vector<float> out(R * C, -7.0f);
    // Rows 3..12, columns 4..11 of every matrix.
    const uint64_t origin = 3 * C + 4;
    auto sub = [&](std::vector<float>& v) { return view(v.data(), v.size() * 4, origin, {9, 7}, {C, 1}); };
    const ChipTensor ov = sub(out);
    run("std.mul", {sub(a), sub(b), ov}, {IN, IN, OUT});
    for (uint32_t i = 0; i < R; ++i)
        for (uint32_t j = 0; j < C; ++j) {
            const bool inside = i >= 3 && i < 12 && j >= 4 && j < 11;
            const size_t k = i * C + j;
            ASSERT_FLOAT_EQ(out[k], inside ? a[k] * b[k] : -7.0f) << i << "," << j;
        }
}

TEST_P(StdKernels, AddScalarOverAStridedOneDimensionalView) {
    auto a = ramp(300, 1.0f);
    std::vector<float> c(300, 0.0f);
    // Every third element.
    run("std.add_scalar", {view(a.data(), a.size() * 4, 1, {100}, {3}), view(c.data(), c.size() * 4, 2, {100}, {3})},
        {IN, OUT}, {f32_as_scalar(2.5f)});
    for (uint32_t i = 0; i < 100; ++i) ASSERT_FLOAT_EQ(c[2 + 3 * i], a[1 + 3 * i] + 2.5f);
    EXPECT_FLOAT_EQ(c[0], 0.0f);
    EXPECT_FLOAT_EQ(c[1], 0.0f);
}

TEST_P(StdKernels, CopyOfInt16IntoATransposedDestination) {
    const uint32_t M = 9, N = 11;
    std::vector<int16_t> src(M * N), dst(M * N, 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int16_t>(i * 3 - 50);
    run("std.copy",
        {view(src.data(), src.size() * 2, 0, {M, N}, {N, 1}, DataType::INT16),
         view(dst.data(), dst.size() * 2, 0, {M, N}, {1, M}, DataType::INT16)},
        {IN, OUT});
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) ASSERT_EQ(dst[j * M + i], src[i * N + j]);
}

TEST_P(StdKernels, CopyOfAPermutedThreeDimensionalView) {
    // src stored [5, 4, 3] row-major, read as [3, 4, 5] (axes reversed); dst dense [3, 4, 5].
    auto src = ramp(60, 1.0f);
    std::vector<float> dst(60, 0.0f);
    run("std.copy", {view(src.data(), 240, 0, {3, 4, 5}, {1, 3, 12}), dense(dst, {3, 4, 5})}, {IN, OUT});
    for (uint32_t i = 0; i < 3; ++i)
        for (uint32_t j = 0; j < 4; ++j)
            for (uint32_t k = 0; k < 5; ++k) ASSERT_FLOAT_EQ(dst[i * 20 + j * 5 + k], src[k * 12 + j * 3 + i]);
}

// An elementwise tile moves at least 16 KiB of output: a small tensor is one
// kernel, a large one 2 x core_count row tiles (2 core threads here). An
// OpenCL chip runs one kernel at a time over the whole device: one tile.
TEST_P(StdKernels, ASmallElementwiseTensorRunsAsOneKernel) {
    auto a = ramp(16, 1.0f);
    std::vector<float> c(16, 0.0f);
    EXPECT_EQ(run("std.copy", {dense(a, {16}), dense(c, {16})}, {IN, OUT}), 1u);
    EXPECT_EQ(c, a);
}

TEST_P(StdKernels, ALargeTransposedElementwiseRunSplitsIntoRowTiles) {
    const uint32_t M = 256, N = 64;  // 64 KiB of FLOAT32 output: 4 tiles
    auto a_storage = ramp(N * M, 1.0f);  // [N, M] row-major, read as [M, N] with strides (1, M)
    auto b = ramp(M * N, 2.0f);
    std::vector<float> c(M * N, 0.0f);
    const ChipTensor at_view = view(a_storage.data(), a_storage.size() * 4, 0, {M, N}, {1, M});
    const bool one_at_a_time = GetParam().device == DeviceKind::OPENCL;
    EXPECT_EQ(run("std.vector_add", {at_view, dense(b, {M, N}), dense(c, {M, N})}, {IN, IN, OUT}),
              one_at_a_time ? 1u : 4u);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) ASSERT_FLOAT_EQ(c[i * N + j], a_storage[j * M + i] + b[i * N + j]);
    std::vector<float> half(M * N / 2, 0.0f);  // 32 KiB: 2 tiles
    auto src = ramp(M * N / 2, -3.0f);
    EXPECT_EQ(
        run("std.add_scalar", {dense(src, {M / 2, N}), dense(half, {M / 2, N})}, {IN, OUT}, {f32_as_scalar(1.5f)}),
        one_at_a_time ? 1u : 2u);
    for (size_t i = 0; i < half.size(); ++i) ASSERT_FLOAT_EQ(half[i], src[i] + 1.5f) << i;
}

TEST_P(StdKernels, VectorAddOfInt32) {
    std::vector<int32_t> a(50), b(50), c(50, 0);
    for (int i = 0; i < 50; ++i) a[i] = i * 7, b[i] = -i;
    run("std.vector_add",
        {view(a.data(), 200, 0, {50}, {1}, DataType::INT32), view(b.data(), 200, 0, {50}, {1}, DataType::INT32),
         view(c.data(), 200, 0, {50}, {1}, DataType::INT32)},
        {IN, IN, OUT});
    for (int i = 0; i < 50; ++i) ASSERT_EQ(c[i], i * 6);
}

namespace {
void reference_matmul(const std::vector<float>& A, const ChipTensor& av, const std::vector<float>& B,
                      const ChipTensor& bv, std::vector<float>& out, uint32_t M, uint32_t K, uint32_t N) {
    out.assign(M * N, 0.0f);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            double s = 0;
            for (uint32_t k = 0; k < K; ++k) s += double(at(A, av, i, k)) * double(at(B, bv, k, j));
            out[i * N + j] = static_cast<float>(s);
        }
}
}  // namespace

TEST_P(StdKernels, TiledMatmulOfContiguousMatrices) {
    const uint32_t M = 45, K = 33, N = 29;
    auto A = ramp(M * K, 0.01f), B = ramp(K * N, 0.02f);
    std::vector<float> C(M * N, 0.0f), ref;
    const ChipTensor av = dense(A, {M, K}), bv = dense(B, {K, N});
    run("std.matmul", {av, bv, dense(C, {M, N})}, {IN, IN, OUT});
    reference_matmul(A, av, B, bv, ref, M, K, N);
    for (size_t i = 0; i < C.size(); ++i) ASSERT_NEAR(C[i], ref[i], 1e-3f * (1 + std::fabs(ref[i]))) << i;
}

TEST_P(StdKernels, TiledMatmulWithATransposedRightSideIntoASubRegion) {
    const uint32_t M = 20, K = 17, N = 12;
    auto A = ramp(M * K, 0.03f);
    auto Bt = ramp(N * K, -0.05f);  // stored [N, K]; used as [K, N] with strides (1, K)
    const uint32_t W = N + 6;       // C lives in columns 3..3+N of a wider [M, W] buffer
    std::vector<float> Cbuf(M * W, 9.0f), ref;
    const ChipTensor av = dense(A, {M, K});
    const ChipTensor bv = view(Bt.data(), Bt.size() * 4, 0, {K, N}, {1, K});
    const ChipTensor cv = view(Cbuf.data(), Cbuf.size() * 4, 3, {M, N}, {W, 1});
    run("std.matmul", {av, bv, cv}, {IN, IN, OUT});
    reference_matmul(A, av, Bt, bv, ref, M, K, N);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < W; ++j) {
            const float got = Cbuf[i * W + j];
            if (j >= 3 && j < 3 + N)
                ASSERT_NEAR(got, ref[i * N + j - 3], 1e-3f * (1 + std::fabs(ref[i * N + j - 3])));
            else
                ASSERT_FLOAT_EQ(got, 9.0f);
        }
}

// std.matmul takes the serial OpenBLAS's sgemm when every view reads as a BLAS
// operand (unit inner stride and a row stride at least the width, or the
// transpose of one) and its portable loop otherwise; each layout below goes
// through one path or the other, and each must agree with the reference, and
// leave the elements of C's buffer outside C's view as they were.
class StdMatmulLayouts : public StdKernels {
protected:
    static constexpr float SENTINEL = 9.0f;

    void expect_matmul(const std::vector<float>& A, const ChipTensor& av, const std::vector<float>& B,
                       const ChipTensor& bv, std::vector<float>& Cbuf, const ChipTensor& cv) {
        const uint32_t M = av.shapes[0], K = av.shapes[1], N = bv.shapes[1];
        std::vector<float> ref;
        run("std.matmul", {av, bv, cv}, {IN, IN, OUT});
        reference_matmul(A, av, B, bv, ref, M, K, N);
        std::vector<bool> inside(Cbuf.size(), false);
        for (uint32_t i = 0; i < M; ++i)
            for (uint32_t j = 0; j < N; ++j) {
                const uint64_t e = cv.start_offset + uint64_t{i} * cv.strides[0] + uint64_t{j} * cv.strides[1];
                inside[e] = true;
                ASSERT_NEAR(Cbuf[e], ref[i * N + j], 1e-3f * (1 + std::fabs(ref[i * N + j]))) << i << "," << j;
            }
        for (size_t e = 0; e < Cbuf.size(); ++e) {
            if (!inside[e]) {
                ASSERT_FLOAT_EQ(Cbuf[e], SENTINEL) << "element " << e << " outside C's view";
            }
        }
    }
};

TEST_P(StdMatmulLayouts, BothOperandsTransposed) {
    const uint32_t M = 23, K = 31, N = 19;
    auto At = ramp(K * M, 0.02f), Bt = ramp(N * K, -0.03f);  // stored [K, M] and [N, K]
    std::vector<float> C(M * N, SENTINEL);
    expect_matmul(At, view(At.data(), At.size() * 4, 0, {M, K}, {1, M}), Bt,
                  view(Bt.data(), Bt.size() * 4, 0, {K, N}, {1, K}), C, dense(C, {M, N}));
}

TEST_P(StdMatmulLayouts, RowStridesLargerThanTheWidths) {
    const uint32_t M = 17, K = 29, N = 21, PA = K + 5, PB = N + 3, PC = N + 7;
    auto A = ramp(M * PA, 0.01f), B = ramp(K * PB, 0.04f);
    std::vector<float> C(M * PC, SENTINEL);
    expect_matmul(A, view(A.data(), A.size() * 4, 0, {M, K}, {PA, 1}), B,
                  view(B.data(), B.size() * 4, 0, {K, N}, {PB, 1}), C,
                  view(C.data(), C.size() * 4, 0, {M, N}, {PC, 1}));
}

TEST_P(StdMatmulLayouts, SubRegionsOfLargerMatrices) {
    // Each operand is an interior block of a [40, 40] buffer.
    const uint32_t W = 40, M = 13, K = 22, N = 9;
    auto A = ramp(W * W, 0.015f), B = ramp(W * W, -0.025f);
    std::vector<float> C(W * W, SENTINEL);
    expect_matmul(A, view(A.data(), A.size() * 4, 5 * W + 7, {M, K}, {W, 1}), B,
                  view(B.data(), B.size() * 4, 11 * W + 2, {K, N}, {W, 1}), C,
                  view(C.data(), C.size() * 4, 20 * W + 30, {M, N}, {W, 1}));
}

TEST_P(StdMatmulLayouts, ANonUnitInnerStrideFallsBackToTheLoop) {
    // B reads every other column; C is written transposed: neither is a BLAS operand.
    const uint32_t M = 11, K = 14, N = 10;
    auto A = ramp(M * K, 0.05f), B = ramp(K * 2 * N, 0.01f);
    std::vector<float> C(N * M, SENTINEL), C2(2 * M * N, SENTINEL);
    const ChipTensor av = dense(A, {M, K});
    const ChipTensor bv = view(B.data(), B.size() * 4, 0, {K, N}, {2 * N, 2});
    expect_matmul(A, av, B, bv, C, view(C.data(), C.size() * 4, 0, {M, N}, {1, M}));
    // A dense B, C with a non-unit inner stride.
    auto Bd = ramp(K * N, -0.02f);
    expect_matmul(A, av, Bd, dense(Bd, {K, N}), C2, view(C2.data(), C2.size() * 4, 1, {M, N}, {2 * N, 2}));
}

TEST_P(StdMatmulLayouts, SingleRowAndSingleColumnOperands) {
    // A [1, K] with a row stride smaller than K, B [K, 1] with any column stride: a dimension of
    // extent 1 takes any stride, and both still go to sgemm.
    const uint32_t K = 37, N = 1;
    auto A = ramp(K, 0.1f), B = ramp(3 * K, 0.2f);
    std::vector<float> C(4, SENTINEL);
    expect_matmul(A, view(A.data(), A.size() * 4, 0, {1, K}, {1, 1}), B,
                  view(B.data(), B.size() * 4, 1, {K, N}, {3, 5}), C, view(C.data(), C.size() * 4, 2, {1, N}, {1, 1}));
}

INSTANTIATE_TEST_SUITE_P(Staging, StdMatmulLayouts, ::testing::ValuesIn(setups()), setup_name);

// Several core threads in std.matmul at once, each on its own row tile: with
// integer-valued inputs every product is exact, so any tile computed wrongly
// (as when two threads share the serial OpenBLAS's work buffers unguarded)
// shows as a mismatch.
TEST(StdMatmulConcurrency, FourCoreThreadsComputeEveryTileExactlyRunAfterRun) {
    ChipConfig c = config(StagingMode::ZERO_COPY);
    c.runtime.core_threads = 4;
    Chip chip{c};
    const uint32_t n = 256;
    std::vector<float> A(n * n), B(n * n), C(n * n), ref(n * n);
    for (uint32_t i = 0; i < n * n; ++i) {
        A[i] = static_cast<float>(static_cast<int>((i * 7) % 17) - 8);
        B[i] = static_cast<float>(static_cast<int>((i * 5) % 11) - 5);
    }
    const ChipTensor av = dense(A, {n, n}), bv = dense(B, {n, n});
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            float s = 0;
            for (uint32_t k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
            ref[i * n + j] = s;
        }
    ChipStorageTaskArgs args{};
    args.add_tensor(av);
    args.add_tensor(bv);
    args.add_tensor(dense(C, {n, n}));
    const TensorArgType tags[3] = {IN, IN, OUT};
    for (int run = 0; run < 500; ++run) {
        std::fill(C.begin(), C.end(), -1.0f);
        const RunResult r = chip.run("std.matmul", args, tags);
        ASSERT_TRUE(r.ok) << r.error;
        for (uint32_t e = 0; e < n * n; ++e) ASSERT_EQ(C[e], ref[e]) << "run " << run << ", element " << e;
    }
}

TEST_P(StdKernels, AShapeMismatchFailsTheRunWithTheKernelsMessage) {
    std::vector<float> a(8), b(8), c(6, 4.0f);
    ChipStorageTaskArgs args{};
    args.add_tensor(dense(a, {8}));
    args.add_tensor(dense(b, {8}));
    args.add_tensor(dense(c, {6}));
    const TensorArgType tags[3] = {IN, IN, OUT};
    const RunResult r = chip.run("std.vector_add", args, tags);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("std.vector_add"), std::string::npos) << r.error;
    EXPECT_EQ(chip.device().memory_stats().live_allocations, 0u);
    for (float v : c) EXPECT_FLOAT_EQ(v, 4.0f);  // a failed run leaves host outputs as they were
}

TEST_P(StdKernels, AnUnknownOrchestrationIsAnError) {
    ChipStorageTaskArgs args{};
    const RunResult r = chip.run("std.nope", args, {});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("no chip orchestration named 'std.nope'"), std::string::npos) << r.error;
}

INSTANTIATE_TEST_SUITE_P(Staging, StdKernels, ::testing::ValuesIn(setups()), setup_name);
