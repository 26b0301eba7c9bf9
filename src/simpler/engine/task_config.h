// TaskConfig: the 64 bytes of call configuration that travel with every task
// member to its child, and who owns which of them.
//
//   bytes  0..31  the caller's call config (python/simpler/call_config.py):
//                 u32 block_dim at 0, u8 zero_copy at 4, the rest zero
//   bytes 32..63  the engine's: for a NEXT_LEVEL member, bit i (byte 32 + i/8,
//                 bit i%8) is set when tensor i's tag writes it (OUTPUT,
//                 OUTPUT_EXISTING, INOUT). Tags never cross a boundary; this
//                 mask is what a chip needs of them to stage: which views come
//                 back. The engine overwrites these bytes at submit.
//
// A chip takes at most CHIP_MAX_TENSOR_ARGS (256) tensors, so 32 bytes hold
// every bit. Readers trust nothing: an index past the mask reads as "not
// written". Plain bytes, no allocation; noexcept throughout.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

inline constexpr size_t TASK_CONFIG_BYTES = 64;
inline constexpr size_t TASK_CONFIG_USER_BYTES = 32;
inline constexpr size_t TASK_CONFIG_WRITE_MASK_OFFSET = 32;
inline constexpr size_t TASK_CONFIG_WRITE_MASK_BITS = (TASK_CONFIG_BYTES - TASK_CONFIG_WRITE_MASK_OFFSET) * 8;
inline constexpr size_t CALL_CONFIG_BLOCK_DIM_OFFSET = 0;
inline constexpr size_t CALL_CONFIG_ZERO_COPY_OFFSET = 4;

using TaskConfig = std::array<std::byte, TASK_CONFIG_BYTES>;
static_assert(TASK_CONFIG_WRITE_MASK_BITS == 256);

// Sets the engine's half of `config` from one member's tags (clears it first).
// Tags past TASK_CONFIG_WRITE_MASK_BITS are ignored (the engine refuses such a
// chip member before it gets here).
inline void set_write_mask(TaskConfig& config, std::span<const TensorArgType> tags) noexcept {
    std::memset(config.data() + TASK_CONFIG_WRITE_MASK_OFFSET, 0, TASK_CONFIG_BYTES - TASK_CONFIG_WRITE_MASK_OFFSET);
    for (size_t i = 0; i < tags.size() && i < TASK_CONFIG_WRITE_MASK_BITS; ++i)
        if (tag_writes(tags[i]))
            config[TASK_CONFIG_WRITE_MASK_OFFSET + i / 8] |= static_cast<std::byte>(1u << (i % 8));
}

// Whether tensor i is written, read from a received config's raw bytes.
inline bool config_writes_tensor(const uint8_t* config, size_t i) noexcept {
    if (i >= TASK_CONFIG_WRITE_MASK_BITS) return false;
    return (config[TASK_CONFIG_WRITE_MASK_OFFSET + i / 8] >> (i % 8)) & 1u;
}

inline uint32_t config_block_dim(const uint8_t* config) noexcept {
    uint32_t v;
    std::memcpy(&v, config + CALL_CONFIG_BLOCK_DIM_OFFSET, sizeof v);
    return v;
}

inline bool config_zero_copy(const uint8_t* config) noexcept { return config[CALL_CONFIG_ZERO_COPY_OFFSET] != 0; }

}  // namespace simpler
