// IdentityMinter: mints the CanonicalIdentity of every backing this process
// owns, and answers whether an identity it minted is still live.
//
// One owner incarnation = one process: the 8-byte owner nonce comes from the OS
// random source (getrandom), never a pid or a clock. A process whose
// environment holds SIMPLER_SHM_TAG (4 lowercase hex digits: a run's tag) draws
// nonces whose first two bytes are the tag, so every /dev/shm name it mints
// starts with "sp" + the tag and a test run can tell its own objects (and, by
// the variable, its own processes) from everyone else's. A forked child that mints
// is a new incarnation: the first call after a pid change draws a fresh nonce
// and starts an empty slot table, so a child never hands out its parent's ids.
// buffer_ids start at 1. A released buffer_id slot is reused by the next mint
// with its generation + 1, so a descriptor naming the older generation is
// refused by check_live() and never resolves to the new buffer's bytes. A slot
// whose generation reaches MAX_SLOT_GENERATION is retired instead of reused.
//
// Does not own bytes or names; the owners (posix_shm_owner.h, fork_owner.h)
// call mint()/release(). Thread-safe (one mutex). Trusts nothing about the
// identities handed to check_live()/release(): any 32 bytes are answered.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "simpler/task_interface/identity.h"

namespace simpler {

inline constexpr uint32_t MAX_SLOT_GENERATION = 0xFFFF;  // keeps shm names within 32 bytes

using OwnerNonce = std::array<uint8_t, OWNER_INSTANCE_ID_BYTES>;

inline constexpr const char* SHM_TAG_VARIABLE = "SIMPLER_SHM_TAG";
inline constexpr size_t SHM_TAG_BYTES = 2;  // leaves 48 random bits in a tagged nonce
using ShmTag = std::array<uint8_t, SHM_TAG_BYTES>;

// A SIMPLER_SHM_TAG value: exactly 4 lowercase hex digits. Throws
// std::invalid_argument naming the variable, the value and the rule otherwise.
ShmTag parse_shm_tag(std::string_view text);

// Draws OWNER_INSTANCE_ID_BYTES from getrandom, the first SHM_TAG_BYTES
// replaced by tag when there is one; throws std::runtime_error when the OS
// random source fails.
OwnerNonce draw_owner_nonce(const std::optional<ShmTag>& tag = std::nullopt);

// The tag this process's environment names (nullopt when SIMPLER_SHM_TAG is
// unset or empty); throws std::invalid_argument when it is malformed.
std::optional<ShmTag> shm_tag_from_environment();

enum class LivenessStatus : uint8_t {
    LIVE = 0,
    NOT_MINTED_HERE = 1,   // another incarnation's nonce
    UNKNOWN_BUFFER = 2,    // buffer_id never minted by this incarnation
    STALE_GENERATION = 3,  // slot reused: the identity names an older generation
    RELEASED = 4,          // the slot's current generation was released
    FUTURE_GENERATION = 5, // a generation this incarnation never minted
};

struct Liveness {
    LivenessStatus status = LivenessStatus::LIVE;
    uint32_t current_generation = 0;  // the slot's newest generation (0 when unknown)
    [[nodiscard]] bool live() const noexcept { return status == LivenessStatus::LIVE; }
};

class IdentityMinter {
public:
    IdentityMinter() = default;
    IdentityMinter(const IdentityMinter&) = delete;
    IdentityMinter& operator=(const IdentityMinter&) = delete;

    // A fresh live identity: a released slot (generation + 1) if any, else the
    // next buffer_id. Throws std::runtime_error when ids are exhausted.
    CanonicalIdentity mint();
    // Marks id's slot free for reuse. Returns false (and changes nothing) when
    // id is not live in this incarnation.
    bool release(const CanonicalIdentity& id);
    [[nodiscard]] Liveness check_live(const CanonicalIdentity& id);
    // This incarnation's nonce (drawn on first use, redrawn after a fork, each
    // time under the environment's SIMPLER_SHM_TAG).
    [[nodiscard]] OwnerNonce nonce();
    [[nodiscard]] bool minted_here(const CanonicalIdentity& id);
    [[nodiscard]] size_t live_count();

private:
    struct Slot {
        uint32_t generation = 0;
        bool live = false;
    };
    void refresh_incarnation_locked();  // redraws nonce and clears slots on a pid change
    Liveness check_live_locked(const CanonicalIdentity& id);

    std::mutex mu_;
    pid_t pid_ = 0;  // 0: no incarnation yet
    OwnerNonce nonce_{};
    std::vector<Slot> slots_;       // slots_[buffer_id - 1]
    std::vector<uint64_t> free_;    // released buffer_ids, reused LIFO
};

// The minter of this process's owners (one incarnation per process).
IdentityMinter& process_identity_minter();

// "stale descriptor: <identity> names generation G of buffer B; the owner's
// slot is at generation C" and the like; empty for LIVE.
std::string describe_liveness(const CanonicalIdentity& id, const Liveness& l);

}  // namespace simpler
