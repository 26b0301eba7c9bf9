// CanonicalIdentity: the 32-byte name of one backing, invariant across every
// process and level (docs/internals/abi.md). A value type only: minting lives with the owners.
//
// Equality and hashing read the three named fields and nothing else, so two
// decodes of one backing key alike whatever their _pad holds. There is no length
// field: comparing or hashing any 32 bytes that arrive is in bounds by
// construction. generation == 0 is never a live identity (the descriptor
// validator refuses it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

namespace simpler {

inline constexpr size_t OWNER_INSTANCE_ID_BYTES = 8;

struct CanonicalIdentity {
    uint8_t owner_instance_id[OWNER_INSTANCE_ID_BYTES];  // random per owner incarnation
    uint64_t buffer_id;                                  // unique within the incarnation, from 1
    uint32_t generation;                                 // from 1; +1 on each reuse of buffer_id
    uint8_t _pad[12];

    friend bool operator==(const CanonicalIdentity& a, const CanonicalIdentity& b) noexcept {
        return std::memcmp(a.owner_instance_id, b.owner_instance_id, OWNER_INSTANCE_ID_BYTES) == 0 &&
               a.buffer_id == b.buffer_id && a.generation == b.generation;
    }

    // 64-bit hash of the three named fields (mixes; not cryptographic).
    [[nodiscard]] uint64_t hash() const noexcept {
        uint64_t owner;
        std::memcpy(&owner, owner_instance_id, sizeof owner);
        uint64_t h = owner ^ 0x9e3779b97f4a7c15ULL;
        auto mix = [](uint64_t x) {
            x ^= x >> 30;
            x *= 0xbf58476d1ce4e5b9ULL;
            x ^= x >> 27;
            x *= 0x94d049bb133111ebULL;
            return x ^ (x >> 31);
        };
        h = mix(h ^ mix(buffer_id));
        return mix(h ^ generation);
    }

    // "<owner hex>:<buffer_id>@g<generation>", e.g. "0a1b2c3d4e5f6071:7@g1".
    [[nodiscard]] std::string to_string() const;
};

static_assert(std::is_trivially_copyable_v<CanonicalIdentity>);
static_assert(std::is_standard_layout_v<CanonicalIdentity>);
static_assert(sizeof(CanonicalIdentity) == 32);
static_assert(alignof(CanonicalIdentity) == 8);
static_assert(offsetof(CanonicalIdentity, owner_instance_id) == 0);
static_assert(offsetof(CanonicalIdentity, buffer_id) == 8);
static_assert(offsetof(CanonicalIdentity, generation) == 16);
static_assert(offsetof(CanonicalIdentity, _pad) == 20);

}  // namespace simpler

template <>
struct std::hash<simpler::CanonicalIdentity> {
    size_t operator()(const simpler::CanonicalIdentity& id) const noexcept { return static_cast<size_t>(id.hash()); }
};
