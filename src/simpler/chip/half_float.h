// FLOAT16 (IEEE-754 binary16) and BFLOAT16 elements as kernels read and write
// them: conversions between their 16-bit patterns and float. Float to 16 bits
// rounds to nearest, ties to even; infinities stay infinite, a NaN stays a
// (quiet) NaN, a finite value past the largest FLOAT16 becomes infinity.
// Widening is exact. Header-only, for the standard kernels and user kernels
// alike (kernel_api.h includes it).
#pragma once

#include <cstdint>
#include <cstring>

namespace simpler::chip {

inline uint32_t float_bits(float f) noexcept {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

inline float bits_float(uint32_t b) noexcept {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

inline float bf16_to_float(uint16_t h) noexcept { return bits_float(uint32_t{h} << 16); }

inline uint16_t float_to_bf16(float f) noexcept {
    const uint32_t b = float_bits(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x0040u);  // quiet NaN
    const uint32_t rounding = 0x7fffu + ((b >> 16) & 1u);
    return static_cast<uint16_t>((b + rounding) >> 16);
}

inline float f16_to_float(uint16_t h) noexcept {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        const float mag = static_cast<float>(man) * 5.9604644775390625e-8f;  // man * 2^-24, exact
        return bits_float(float_bits(mag) | sign);
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (man << 13));
    return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t float_to_f16(float f) noexcept {
    const uint32_t b = float_bits(f);
    const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
    const uint32_t mag = b & 0x7fffffffu;
    if (mag >= 0x7f800000u)  // infinity, or NaN (kept quiet, with its top payload bits)
        return static_cast<uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u | ((mag >> 13) & 0x3ffu) : 0u));
    if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds past 65504
    if (mag >= 0x38800000u) {                                               // normal: >= 2^-14
        uint32_t h = ((mag >> 23) - 112u) << 10 | ((mag >> 13) & 0x3ffu);
        const uint32_t rest = mag & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;  // a carry moves into the exponent
        return static_cast<uint16_t>(sign | h);
    }
    if (mag <= 0x33000000u) return sign;  // at most 2^-25: rounds to zero (the tie goes to even 0)
    // Subnormal: units of 2^-24.
    const uint32_t man = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - (mag >> 23);
    uint32_t h = man >> shift;
    const uint32_t rest = man & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u) != 0)) ++h;
    return static_cast<uint16_t>(sign | h);
}

}  // namespace simpler::chip
