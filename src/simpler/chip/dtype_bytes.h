// The element types as a kernel's Tensor carries them (its one-byte dtype),
// named once for the standard kernels' checks and dispatch (std_*.cpp and
// their OpenCL C forms in clc/).
#pragma once

#include <cstdint>

#include "simpler/task_interface/data_type.h"

namespace simpler::chip {

inline constexpr uint8_t F32 = static_cast<uint8_t>(DataType::FLOAT32);
inline constexpr uint8_t F64 = static_cast<uint8_t>(DataType::FLOAT64);
inline constexpr uint8_t I32 = static_cast<uint8_t>(DataType::INT32);
inline constexpr uint8_t F16 = static_cast<uint8_t>(DataType::FLOAT16);
inline constexpr uint8_t BF16 = static_cast<uint8_t>(DataType::BFLOAT16);

}  // namespace simpler::chip
