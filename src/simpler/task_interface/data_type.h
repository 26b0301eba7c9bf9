// DataType: the element type of a view, and its element size in bytes.
//
// Values are frozen wire values (docs/internals/abi.md); a struct stores them as a raw uint8_t
// and converts with data_type_element_size(), which answers 0 for any value that
// is not a known DataType. Nothing here trusts its input: every function is total
// over all 256 raw values.
#pragma once

#include <cstdint>

namespace simpler {

enum class DataType : uint8_t {
    FLOAT32 = 0,
    FLOAT16 = 1,
    INT32 = 2,
    INT16 = 3,
    INT8 = 4,
    UINT8 = 5,
    BFLOAT16 = 6,
    INT64 = 7,
    UINT64 = 8,
    UINT16 = 9,
    UINT32 = 10,
    BOOL = 11,
    FP8E4M3FN = 12,
    FP8E8M0 = 13,
    FP4E2M1 = 14,  // two packed values a byte; addressed as one byte per element
    FLOAT64 = 15,
};

inline constexpr uint8_t DATA_TYPE_COUNT = 16;

// Element size in bytes of a raw DataType value; 0 when the value is unknown.
constexpr uint32_t data_type_element_size(uint8_t raw) noexcept {
    constexpr uint8_t sizes[DATA_TYPE_COUNT] = {4, 2, 4, 2, 1, 1, 2, 8, 8, 2, 4, 1, 1, 1, 1, 8};
    return raw < DATA_TYPE_COUNT ? sizes[raw] : 0;
}

constexpr uint32_t element_size(DataType t) noexcept { return data_type_element_size(static_cast<uint8_t>(t)); }

// Upper-case name of a raw DataType value ("FLOAT32"), or "UNKNOWN".
const char* data_type_name(uint8_t raw) noexcept;

static_assert(sizeof(DataType) == 1);
static_assert(static_cast<uint8_t>(DataType::FLOAT32) == 0);
static_assert(static_cast<uint8_t>(DataType::FLOAT16) == 1);
static_assert(static_cast<uint8_t>(DataType::INT32) == 2);
static_assert(static_cast<uint8_t>(DataType::INT16) == 3);
static_assert(static_cast<uint8_t>(DataType::INT8) == 4);
static_assert(static_cast<uint8_t>(DataType::UINT8) == 5);
static_assert(static_cast<uint8_t>(DataType::BFLOAT16) == 6);
static_assert(static_cast<uint8_t>(DataType::INT64) == 7);
static_assert(static_cast<uint8_t>(DataType::UINT64) == 8);
static_assert(static_cast<uint8_t>(DataType::UINT16) == 9);
static_assert(static_cast<uint8_t>(DataType::UINT32) == 10);
static_assert(static_cast<uint8_t>(DataType::BOOL) == 11);
static_assert(static_cast<uint8_t>(DataType::FP8E4M3FN) == 12);
static_assert(static_cast<uint8_t>(DataType::FP8E8M0) == 13);
static_assert(static_cast<uint8_t>(DataType::FP4E2M1) == 14);
static_assert(static_cast<uint8_t>(DataType::FLOAT64) == 15);
static_assert(element_size(DataType::FLOAT32) == 4 && element_size(DataType::FLOAT16) == 2);
static_assert(element_size(DataType::INT64) == 8 && element_size(DataType::FP4E2M1) == 1);
static_assert(element_size(DataType::FLOAT64) == 8);
static_assert(data_type_element_size(DATA_TYPE_COUNT) == 0 && data_type_element_size(255) == 0);

}  // namespace simpler
