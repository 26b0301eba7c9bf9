// OwnedBackingTable: the owner side's record of every host backing this
// process created and has not closed — the descriptor it handed out, keyed by
// identity, and the same record keyed by where a consumer finds the bytes (the
// POSIX shm name, or the FORK_* base address).
//
// The submit path asks problem(d) of every host descriptor a task names
// (engine/worker.cpp): a descriptor must be one an owner really handed out.
// Refused (a non-empty answer naming what disagrees):
//   - an identity of this incarnation's nonce with no record (never minted,
//     stale generation, or the buffer was closed: the minter's words);
//   - an identity with a record whose backend, body (shm name / base address)
//     or nbytes differ, or whose grant asks for more than the record grants
//     (READ < READWRITE, WRITE < READWRITE; READ and WRITE are disjoint);
//   - an identity of another nonce whose shm name or base address is one of
//     this process's backings (a forged identity over real bytes);
//   - an identity whose owner released it (mark_released) while the free
//     waits for the tasks that still name it.
// Any other foreign descriptor is not this process's to judge and passes (its
// consumer's import refuses what it cannot resolve).
//
// BackingOwner registers itself on creation and the creating process removes
// the record on close (backing_owner.cpp); a forked child inherits the table
// as of the fork. Thread-safe (one mutex); problem() is one hash lookup when
// the identity is recorded.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "simpler/task_interface/buffer.h"

namespace simpler {

class IdentityMinter;

class OwnedBackingTable {
public:
    void add(const BufferDescriptor& d);
    void remove(const CanonicalIdentity& id);
    // The owner released id; the record stays (until remove()) so that
    // problem() names the release while the free is pending.
    void mark_released(const CanonicalIdentity& id);
    // Empty when d agrees with what its owner handed out (or is not this
    // process's to judge); else why it is refused. `minter` (nullptr: the
    // process's) says which nonce is this incarnation's.
    [[nodiscard]] std::string problem(const BufferDescriptor& d, IdentityMinter* minter = nullptr) const;
    [[nodiscard]] bool contains(const CanonicalIdentity& id) const;
    [[nodiscard]] size_t size() const;

private:
    mutable std::mutex mu_;
    struct Record {
        BufferDescriptor descriptor;
        bool released = false;
    };
    std::unordered_map<CanonicalIdentity, Record> by_identity_;
    std::unordered_map<std::string, CanonicalIdentity> by_location_;  // resolution key -> identity
};

// The table of this process's owners.
OwnedBackingTable& process_owned_backings();

// True when a consumer holding grant `asked` would get no more than `granted`.
[[nodiscard]] constexpr bool grant_within(AccessMode asked, AccessMode granted) noexcept {
    return asked == granted || granted == AccessMode::READWRITE;
}

}  // namespace simpler
