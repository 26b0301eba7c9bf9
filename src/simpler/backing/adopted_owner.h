// AdoptedOwner: the owner side of host memory the runtime did not allocate —
// a user's NumPy array or torch tensor named as a backing (Worker.share).
//
//   FORK_SHM   bytes in a MAP_SHARED mapping, adopted before the consumers are
//              forked: a child sees them at the same address and its writes
//              reach the owner.
//   FORK_COW   private bytes adopted before the fork: a child sees them as of
//              the fork, copy-on-write, so the grant is READ only.
//   POSIX_SHM  bytes inside a named POSIX shm object that this process maps
//              from its byte 0: the descriptor names the object, nbytes counts
//              from the object's byte 0, and a consumer maps it by name.
//
// The identity is minted like any other owner's and the descriptor is recorded
// in process_owned_backings(); a fork region is listed in a ForkRegionTable
// (as a region whose pages it does not own alone, so a consumer protects only
// the pages wholly inside it). What it never does is free the bytes: no munmap,
// no unlink, on close or in any process. The memory belongs to the user's
// object, which the caller keeps alive until the free has run (the Python side
// holds it; BackingOwner::free_pending says when it may let go).
//
// Trusts its caller to have checked what the memory is (python/simpler/model/share.py
// reads /proc/self/maps for that); checks only what it can without the OS:
// a null address, nbytes == 0, a FORK_COW grant other than READ, a name that
// is not a valid POSIX_SHM body (std::invalid_argument).
#pragma once

#include <memory>
#include <string>

#include "simpler/backing/backing_owner.h"

namespace simpler {

class IdentityMinter;
class ForkRegionTable;

class AdoptedOwner final : public BackingOwner {
public:
    // kind is FORK_SHM or FORK_COW; [base, base + nbytes) are the bytes.
    static std::unique_ptr<AdoptedOwner> adopt_fork(BackendKind kind, uint8_t* base, uint64_t nbytes, AccessMode access,
                                                    IdentityMinter* minter = nullptr,
                                                    ForkRegionTable* regions = nullptr,
                                                    uint32_t owner_worker_path_id = 0);
    // The object `name` (no leading '/') is mapped at object_base in this
    // process over at least nbytes; the descriptor names it with nbytes.
    static std::unique_ptr<AdoptedOwner> adopt_posix_shm(const std::string& name, uint8_t* object_base, uint64_t nbytes,
                                                         AccessMode access, IdentityMinter* minter = nullptr,
                                                         uint32_t owner_worker_path_id = 0);
    ~AdoptedOwner() override;

    // The POSIX shm name (empty for the fork kinds).
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    AdoptedOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, ForkRegionTable* regions,
                 std::string name);
    void release_backing(bool creator) noexcept override;
    [[nodiscard]] std::function<void()> creator_release_action() const override;
    [[nodiscard]] int64_t external_holders() const noexcept override;

    ForkRegionTable* regions_;  // nullptr for POSIX_SHM
    std::string name_;
};

}  // namespace simpler
