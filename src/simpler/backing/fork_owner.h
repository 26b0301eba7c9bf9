// ForkOwner: owns one pre-fork host region, shared with children by address.
//
//   FORK_SHM  an anonymous MAP_SHARED mapping: a child forked afterwards sees
//             the owner's bytes at the same VA and its writes reach the owner.
//   FORK_COW  an anonymous MAP_PRIVATE mapping: a child sees the bytes as of
//             the fork, copy-on-write, so the descriptor grants READ only
//             (a child's write would never reach the owner).
//
// The descriptor's body is the base VA (8 bytes LE). The region is listed in a
// ForkRegionTable so a consumer's ImportRegistry can check that an address it
// is handed is one this owner created before the fork. Create these before
// forking the consumers. Only the creating process releases the identity and
// delists the region; every process unmaps its own copy on close. close()
// refuses (ExportsAliveError) while an ImportRegistry of this process holds the
// region (fork_region_table.h, pins).
//
// Throws std::invalid_argument for nbytes == 0 or a FORK_COW grant other than
// READ, std::runtime_error when mmap fails.
#pragma once

#include <memory>

#include "simpler/backing/backing_owner.h"

namespace simpler {

class IdentityMinter;
class ForkRegionTable;

class ForkOwner final : public BackingOwner {
public:
    static std::unique_ptr<ForkOwner> create_shared(uint64_t nbytes, AccessMode access = AccessMode::READWRITE,
                                                    IdentityMinter* minter = nullptr,
                                                    ForkRegionTable* regions = nullptr,
                                                    uint32_t owner_worker_path_id = 0);
    static std::unique_ptr<ForkOwner> create_cow(uint64_t nbytes, IdentityMinter* minter = nullptr,
                                                 ForkRegionTable* regions = nullptr, uint32_t owner_worker_path_id = 0);
    // kind is FORK_SHM or FORK_COW; create_shared / create_cow spell the two.
    static std::unique_ptr<ForkOwner> create(BackendKind kind, uint64_t nbytes, AccessMode access,
                                             IdentityMinter* minter, ForkRegionTable* regions,
                                             uint32_t owner_worker_path_id);
    ~ForkOwner() override;

private:
    ForkOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, ForkRegionTable* regions);
    void release_backing(bool creator) noexcept override;
    [[nodiscard]] std::function<void()> creator_release_action() const override;
    [[nodiscard]] int64_t external_holders() const noexcept override;

    ForkRegionTable* regions_;
};

}  // namespace simpler
