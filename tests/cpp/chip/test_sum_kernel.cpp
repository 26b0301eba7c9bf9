// std.sum_n through its orchestration on a Chip: each of its four dtypes
// against a reference computed here, the output as one of the terms (and its
// place in the order of the sum), strided views,
// INT32 wrapping, the one rounding of the half types, and its refusals —
// staged, zero-copy, and on an OpenCL device where one is found.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "opencl_fixture.h"
#include "simpler/chip/chip.h"
#include "simpler/chip/kernel_api.h"

using namespace simpler::chip;
using chip_test::view;

namespace {

constexpr TensorArgType IN = TensorArgType::INPUT;
constexpr TensorArgType OUT = TensorArgType::OUTPUT_EXISTING;
constexpr TensorArgType INOUT = TensorArgType::INOUT;

struct Setup {
    StagingMode mode;
    DeviceKind device;
    const char* name;
};

std::vector<Setup> setups() {
    std::vector<Setup> out{{StagingMode::STAGE, DeviceKind::SIMULATED, "Staged"},
                           {StagingMode::ZERO_COPY, DeviceKind::SIMULATED, "ZeroCopy"}};
    if (opencl_tests_run()) out.push_back({StagingMode::STAGE, DeviceKind::OPENCL, "OpenCl"});
    return out;
}

class SumKernel : public ::testing::TestWithParam<Setup> {
protected:
    Chip chip{[] {
        ChipConfig c;
        c.arena_bytes = 64 << 20;
        c.staging = GetParam().mode;
        c.device.kind = GetParam().device;
        c.runtime.core_threads = 2;
        return c;
    }()};

    RunResult run(const std::vector<ChipTensor>& tensors, const std::vector<TensorArgType>& tags,
                  std::initializer_list<uint64_t> scalars = {}) {
        ChipStorageTaskArgs args{};
        for (const ChipTensor& t : tensors) args.add_tensor(t);
        for (uint64_t s : scalars) args.add_scalar(s);
        return chip.run("std.sum_n", args, tags);
    }
};

template <typename T>
ChipTensor flat(const std::vector<T>& v, DataType dt) {
    return view(v.data(), v.size() * sizeof(T), 0, {static_cast<uint32_t>(v.size())}, {1}, dt);
}

}  // namespace

TEST_P(SumKernel, Float32OfFiveInputs) {
    const size_t n = 3000;  // more than one accumulator block per row
    std::vector<std::vector<float>> xs(5, std::vector<float>(n));
    for (size_t q = 0; q < xs.size(); ++q)
        for (size_t i = 0; i < n; ++i) xs[q][i] = static_cast<float>((i * (q + 3)) % 101) * 0.25f - 10.0f;
    std::vector<float> out(n, -1.0f);
    std::vector<ChipTensor> ts;
    for (const auto& x : xs) ts.push_back(flat(x, DataType::FLOAT32));
    ts.push_back(flat(out, DataType::FLOAT32));
    const RunResult r = run(ts, {IN, IN, IN, IN, IN, OUT});
    ASSERT_TRUE(r.ok) << r.error;
    for (size_t i = 0; i < n; ++i) {
        float ref = 0;
        for (const auto& x : xs) ref += x[i];
        ASSERT_EQ(out[i], ref) << i;
    }
}

TEST_P(SumKernel, TheOutputCanBeOneOfTheTerms) {
    std::vector<float> a(100), out(100);
    for (int i = 0; i < 100; ++i) a[i] = static_cast<float>(i), out[i] = 1000.0f + static_cast<float>(i);
    const RunResult r = run({flat(a, DataType::FLOAT32), flat(out, DataType::FLOAT32)}, {IN, INOUT}, {1});
    ASSERT_TRUE(r.ok) << r.error;
    for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], 1000.0f + 2.0f * static_cast<float>(i)) << i;
}

// The terms are added left to right with the output at its place p: in float,
// (-1e8 + 1e8) + 1 is 1 while (1 + -1e8) + 1e8 is 0 (1 - 1e8 rounds to -1e8).
TEST_P(SumKernel, TheOutputsPlaceDecidesTheOrderOfTheSum) {
    for (uint64_t p : {uint64_t{1}, uint64_t{3}}) {
        std::vector<float> x1(8, -1e8f), x2(8, 1e8f), out(8, 1.0f);
        const RunResult r =
            run({flat(x1, DataType::FLOAT32), flat(x2, DataType::FLOAT32), flat(out, DataType::FLOAT32)},
                {IN, IN, INOUT}, {p});
        ASSERT_TRUE(r.ok) << r.error;
        for (float v : out) ASSERT_EQ(v, p == 3 ? 1.0f : 0.0f) << "p " << p;
    }
    std::vector<float> x1(8, 1.0f), out(8, 5.0f);
    const RunResult r = run({flat(x1, DataType::FLOAT32), flat(out, DataType::FLOAT32)}, {IN, INOUT}, {3});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("the output's place among the terms is 3, past the 2 terms"), std::string::npos) << r.error;
    for (float v : out) EXPECT_EQ(v, 5.0f);
}

TEST_P(SumKernel, Int32WrapsAround) {
    std::vector<int32_t> a(64, INT32_MAX), b(64), out(64, 0);
    for (int i = 0; i < 64; ++i) b[i] = i + 1;
    const RunResult r =
        run({flat(a, DataType::INT32), flat(b, DataType::INT32), flat(out, DataType::INT32)}, {IN, IN, OUT});
    ASSERT_TRUE(r.ok) << r.error;
    for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], INT32_MIN + i) << i;
}

// 2048 + 1 + 1 in FLOAT16: summed in float (2050, exact) and rounded once,
// where adding pairwise in FLOAT16 would round 2049 back to 2048 twice.
TEST_P(SumKernel, Float16SumsInFloatAndRoundsOnce) {
    std::vector<uint16_t> a(40, float_to_f16(2048.0f)), b(40, float_to_f16(1.0f)), c(40, float_to_f16(1.0f));
    std::vector<uint16_t> out(40, 0);
    const RunResult r = run({flat(a, DataType::FLOAT16), flat(b, DataType::FLOAT16), flat(c, DataType::FLOAT16),
                             flat(out, DataType::FLOAT16)},
                            {IN, IN, IN, OUT});
    ASSERT_TRUE(r.ok) << r.error;
    for (uint16_t v : out) ASSERT_EQ(f16_to_float(v), 2050.0f);
}

TEST_P(SumKernel, Bfloat16OfAStridedTwoDimensionalView) {
    const uint32_t R = 6, C = 10;
    std::vector<uint16_t> a(R * C), bt(C * R), out(R * C, float_to_bf16(-3.0f));
    for (uint32_t i = 0; i < R; ++i)
        for (uint32_t j = 0; j < C; ++j) {
            a[i * C + j] = float_to_bf16(static_cast<float>(i * 16 + j));
            bt[j * R + i] = float_to_bf16(0.5f * static_cast<float>(j));  // stored transposed
        }
    // Columns 2..8 of each row: a sub-region of a, out; b read through its transpose.
    const ChipTensor av = view(a.data(), a.size() * 2, 2, {R, 7}, {C, 1}, DataType::BFLOAT16);
    const ChipTensor bv = view(bt.data(), bt.size() * 2, 2 * R, {R, 7}, {1, R}, DataType::BFLOAT16);
    const ChipTensor ov = view(out.data(), out.size() * 2, 2, {R, 7}, {C, 1}, DataType::BFLOAT16);
    const RunResult r = run({av, bv, ov}, {IN, IN, OUT});
    ASSERT_TRUE(r.ok) << r.error;
    for (uint32_t i = 0; i < R; ++i)
        for (uint32_t j = 0; j < C; ++j) {
            const float want = j >= 2 && j < 9 ? static_cast<float>(i * 16 + j) + 0.5f * static_cast<float>(j) : -3.0f;
            ASSERT_EQ(bf16_to_float(out[i * C + j]), want) << i << "," << j;
        }
}

TEST_P(SumKernel, OneInputIsACopy) {
    std::vector<int32_t> a{5, -6, 7}, out(3, 0);
    const RunResult r = run({flat(a, DataType::INT32), flat(out, DataType::INT32)}, {IN, OUT});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(out, a);
}

TEST_P(SumKernel, RefusesMismatchedDtypesUnsupportedDtypesAndBadCounts) {
    std::vector<float> f(8, 1.0f), out(8, 0.0f);
    std::vector<int32_t> i32(8, 1);
    RunResult r =
        run({flat(f, DataType::FLOAT32), flat(i32, DataType::INT32), flat(out, DataType::FLOAT32)}, {IN, IN, OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("std.sum_n: input 1 is INT32, the output FLOAT32"), std::string::npos) << r.error;
    std::vector<int16_t> s(8, 1), so(8, 0);
    r = run({flat(s, DataType::INT16), flat(so, DataType::INT16)}, {IN, OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("dtype INT16 is not supported"), std::string::npos) << r.error;
    r = run({flat(out, DataType::FLOAT32)}, {OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("std.sum_n takes 1 to 31 input tensors"), std::string::npos) << r.error;
    std::vector<float> shorter(6, 0.0f);
    r = run({flat(f, DataType::FLOAT32), flat(shorter, DataType::FLOAT32)}, {IN, OUT});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("argument 0's shape differs"), std::string::npos) << r.error;
    for (float v : out) EXPECT_EQ(v, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Staging, SumKernel, ::testing::ValuesIn(setups()),
                         [](const auto& p) { return std::string(p.param.name); });
