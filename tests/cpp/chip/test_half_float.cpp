// half_float.h against IEEE-754: every FLOAT16 and BFLOAT16 pattern widens and
// narrows back to itself, the midpoint between two neighbours rounds to the
// even one (and a hair off it to the nearer), overflow and NaN behave.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "simpler/chip/half_float.h"

using namespace simpler::chip;

namespace {

bool f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

}  // namespace

TEST(HalfFloat, EveryFloat16PatternRoundTrips) {
    for (uint32_t h = 0; h <= 0xffffu; ++h) {
        const auto p = static_cast<uint16_t>(h);
        const float f = f16_to_float(p);
        if (f16_is_nan(p)) {
            EXPECT_TRUE(std::isnan(f)) << h;
            EXPECT_TRUE(f16_is_nan(float_to_f16(f))) << h;
            continue;
        }
        ASSERT_EQ(float_to_f16(f), p) << std::hex << h;
    }
}

TEST(HalfFloat, KnownFloat16Values) {
    EXPECT_EQ(f16_to_float(0x3c00), 1.0f);
    EXPECT_EQ(f16_to_float(0xc000), -2.0f);
    EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
    EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    EXPECT_EQ(f16_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
    EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);               // below the midpoint to infinity
    EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);               // the midpoint: ties to even is infinity
    EXPECT_EQ(float_to_f16(1e10f), 0x7c00);
    EXPECT_EQ(float_to_f16(-1e10f), 0xfc00);
    EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: to even 0
    EXPECT_EQ(float_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
    EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
    EXPECT_TRUE(f16_is_nan(float_to_f16(std::numeric_limits<float>::quiet_NaN())));
}

// Between every two neighbouring finite positive FLOAT16 values: the exact
// midpoint goes to the one with an even last bit, one float step either side to
// the nearer neighbour.
TEST(HalfFloat, Float16MidpointsRoundToNearestEven) {
    for (uint32_t h = 0; h < 0x7bffu; ++h) {
        const auto lo = static_cast<uint16_t>(h);
        const auto hi = static_cast<uint16_t>(h + 1);
        const float a = f16_to_float(lo), b = f16_to_float(hi);
        const float mid = (a + b) / 2;  // exact: FLOAT16 significands have 11 bits
        ASSERT_EQ(float_to_f16(mid), (h & 1u) == 0 ? lo : hi) << std::hex << h;
        ASSERT_EQ(float_to_f16(std::nextafter(mid, 0.0f)), lo) << std::hex << h;
        ASSERT_EQ(float_to_f16(std::nextafter(mid, b)), hi) << std::hex << h;
        ASSERT_EQ(float_to_f16(-mid), static_cast<uint16_t>(float_to_f16(mid) | 0x8000u)) << std::hex << h;
    }
}

TEST(HalfFloat, EveryBfloat16PatternRoundTrips) {
    for (uint32_t h = 0; h <= 0xffffu; ++h) {
        const auto p = static_cast<uint16_t>(h);
        const float f = bf16_to_float(p);
        if (bf16_is_nan(p)) {
            EXPECT_TRUE(std::isnan(f)) << h;
            EXPECT_TRUE(bf16_is_nan(float_to_bf16(f))) << h;
            continue;
        }
        ASSERT_EQ(float_to_bf16(f), p) << std::hex << h;
    }
}

TEST(HalfFloat, Bfloat16MidpointsRoundToNearestEven) {
    for (uint32_t h = 0; h < 0x7f7fu; ++h) {
        const auto lo = static_cast<uint16_t>(h);
        const auto hi = static_cast<uint16_t>(h + 1);
        const float a = bf16_to_float(lo), b = bf16_to_float(hi);
        const float mid = bits_float((float_bits(a) + float_bits(b)) / 2);  // the pattern between: exact midpoint
        ASSERT_EQ(float_to_bf16(mid), (h & 1u) == 0 ? lo : hi) << std::hex << h;
        ASSERT_EQ(float_to_bf16(std::nextafter(mid, 0.0f)), lo) << std::hex << h;
        ASSERT_EQ(float_to_bf16(std::nextafter(mid, b)), hi) << std::hex << h;
    }
    EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the largest: infinity
    EXPECT_TRUE(bf16_is_nan(float_to_bf16(std::numeric_limits<float>::quiet_NaN())));
}
