// CallConfig: the 64 bytes of call configuration that travel with every task
// member to its child (docs/internals/abi.md), and who owns which of them.
//
//   bytes  0..7   the caller's: u32 block_dim at 0, u8 zero_copy at 4, u8
//                 checked at 5, the rest (_pad0) zero
//   bytes  8..31  the engine's write_only_mask: bit i set when tensor i's tag
//                 writes it without reading it (OUTPUT, OUTPUT_EXISTING): a
//                 consumer that would fetch or stage in the view's bytes need
//                 not; set with tensor i's write bit clear, it says the tag is
//                 NO_DEP (read, and ordered against nothing), so a next level
//                 forwards it as NO_DEP. Tensors past its 192 bits read as
//                 "read" (INPUT).
//   bytes 32..63  the engine's write_mask: for every member, bit i (byte
//                 i/8, bit i%8) is set when tensor i's tag writes it (OUTPUT,
//                 OUTPUT_EXISTING, INOUT). Tags never cross a boundary; this
//                 mask is what a consumer needs of them: which views a chip
//                 stages back, and which views a chip or a sub-worker may map
//                 writable (the others get read-only mappings). The engine
//                 overwrites it at submit.
//
// A plain POD pinned below (and by tests/cpp/task_interface/test_abi_layout.cpp);
// the ipc mailbox carries it as 64 opaque bytes. A chip takes at most
// CHIP_MAX_TENSOR_ARGS (256) tensors, so 32 bytes hold every bit. Readers trust
// nothing: an index past the mask reads as "not written", any nonzero
// zero_copy or checked byte as true. No allocation; noexcept throughout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

inline constexpr size_t CALL_CONFIG_SIZE = 64;
inline constexpr size_t CALL_CONFIG_WRITE_MASK_BYTES = 32;
inline constexpr size_t CALL_CONFIG_WRITE_MASK_BITS = CALL_CONFIG_WRITE_MASK_BYTES * 8;
inline constexpr size_t CALL_CONFIG_WRITE_ONLY_MASK_BYTES = 24;
inline constexpr size_t CALL_CONFIG_WRITE_ONLY_MASK_BITS = CALL_CONFIG_WRITE_ONLY_MASK_BYTES * 8;

struct CallConfig {
    uint32_t block_dim = 0;   // at most this many core threads to tile for (0: all)
    uint8_t zero_copy = 0;    // nonzero: run on host arguments in place instead of staging them
    uint8_t checked = 0;      // nonzero: stage between guard bytes and fail on a write outside a view (wins)
    uint8_t _pad0[2] = {};    // zero
    uint8_t write_only_mask[CALL_CONFIG_WRITE_ONLY_MASK_BYTES] = {};  // the engine's; see above
    uint8_t write_mask[CALL_CONFIG_WRITE_MASK_BYTES] = {};            // the engine's; see above

    bool operator==(const CallConfig&) const = default;
};

static_assert(std::is_trivially_copyable_v<CallConfig>);
static_assert(std::is_standard_layout_v<CallConfig>);
static_assert(sizeof(CallConfig) == CALL_CONFIG_SIZE);
static_assert(alignof(CallConfig) == 4);
static_assert(offsetof(CallConfig, block_dim) == 0);
static_assert(offsetof(CallConfig, zero_copy) == 4);
static_assert(offsetof(CallConfig, checked) == 5);
static_assert(offsetof(CallConfig, _pad0) == 6);
static_assert(offsetof(CallConfig, write_only_mask) == 8);
static_assert(offsetof(CallConfig, write_mask) == 32);

// The config whose bytes `bytes` (CALL_CONFIG_SIZE of them) hold.
inline CallConfig call_config_from_bytes(const void* bytes) noexcept {
    CallConfig c;
    std::memcpy(&c, bytes, sizeof c);
    return c;
}

// Sets the engine's part of `config` from one member's tags (clears it
// first): the write mask and the write-only mask. Tags past each mask's bits
// are ignored (the engine refuses a chip member past CALL_CONFIG_WRITE_MASK_BITS
// before it gets here; past the write-only mask's bits a view reads as read).
inline void set_write_mask(CallConfig& config, std::span<const TensorArgType> tags) noexcept {
    std::memset(config.write_mask, 0, sizeof config.write_mask);
    std::memset(config.write_only_mask, 0, sizeof config.write_only_mask);
    for (size_t i = 0; i < tags.size() && i < CALL_CONFIG_WRITE_MASK_BITS; ++i) {
        const auto bit = static_cast<uint8_t>(1u << (i % 8));
        if (tag_writes(tags[i])) config.write_mask[i / 8] |= bit;
        if (i < CALL_CONFIG_WRITE_ONLY_MASK_BITS &&
            (tags[i] == TensorArgType::OUTPUT || tags[i] == TensorArgType::OUTPUT_EXISTING ||
             tags[i] == TensorArgType::NO_DEP))
            config.write_only_mask[i / 8] |= bit;
    }
}

// Whether tensor i is written (its bit in the write mask).
inline bool writes_tensor(const CallConfig& config, size_t i) noexcept {
    if (i >= CALL_CONFIG_WRITE_MASK_BITS) return false;
    return (config.write_mask[i / 8] >> (i % 8)) & 1u;
}

// Tensor i's bit in the write-only mask as it is stored, whatever the write
// mask says (a decoder checks the two agree); false past the mask.
inline bool write_only_bit(const CallConfig& config, size_t i) noexcept {
    if (i >= CALL_CONFIG_WRITE_ONLY_MASK_BITS) return false;
    return (config.write_only_mask[i / 8] >> (i % 8)) & 1u;
}

// Whether tensor i is written without being read (its bit in the write-only
// mask); false past the mask, and for a tensor the write mask does not write.
inline bool writes_only_tensor(const CallConfig& config, size_t i) noexcept {
    return writes_tensor(config, i) && write_only_bit(config, i);
}

// Whether tensor i's tag was NO_DEP (its write-only bit without its write bit);
// false past the write-only mask (such a tensor reads as INPUT).
inline bool no_dep_tensor(const CallConfig& config, size_t i) noexcept {
    return !writes_tensor(config, i) && write_only_bit(config, i);
}

}  // namespace simpler
