#include "simpler/backing/adopted_owner.h"

#include <stdexcept>
#include <utility>

#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/identity_minter.h"

namespace simpler {

std::unique_ptr<AdoptedOwner> AdoptedOwner::adopt_fork(BackendKind kind, uint8_t* base, uint64_t nbytes,
                                                       AccessMode access, IdentityMinter* minter,
                                                       ForkRegionTable* regions, uint32_t owner_worker_path_id) {
    if (kind != BackendKind::FORK_SHM && kind != BackendKind::FORK_COW)
        throw std::invalid_argument("AdoptedOwner: a fork backing is FORK_SHM or FORK_COW");
    const std::string who = kind == BackendKind::FORK_SHM ? "AdoptedOwner(FORK_SHM)" : "AdoptedOwner(FORK_COW)";
    if (base == nullptr) throw std::invalid_argument(who + ": the address is null");
    if (nbytes == 0) throw std::invalid_argument(who + ": nbytes must be > 0");
    if (kind == BackendKind::FORK_COW && access != AccessMode::READ)
        throw std::invalid_argument(who + ": a copy-on-write backing grants READ only");
    if (minter == nullptr) minter = &process_identity_minter();
    if (regions == nullptr) regions = &process_fork_regions();
    const CanonicalIdentity id = minter->mint();
    BufferDescriptor desc;
    try {
        desc =
            make_address_descriptor(id, kind, access, nbytes, reinterpret_cast<uint64_t>(base), owner_worker_path_id);
        ForkRegion region{reinterpret_cast<uint64_t>(base), nbytes, kind};
        region.owns_pages = false;
        regions->add(id, region);
    } catch (...) {
        minter->release(id);
        throw;
    }
    return std::unique_ptr<AdoptedOwner>(new AdoptedOwner(desc, base, minter, regions, {}));
}

std::unique_ptr<AdoptedOwner> AdoptedOwner::adopt_posix_shm(const std::string& name, uint8_t* object_base,
                                                            uint64_t nbytes, AccessMode access, IdentityMinter* minter,
                                                            uint32_t owner_worker_path_id) {
    if (object_base == nullptr) throw std::invalid_argument("AdoptedOwner(POSIX_SHM): the address is null");
    if (minter == nullptr) minter = &process_identity_minter();
    const CanonicalIdentity id = minter->mint();
    BufferDescriptor desc;
    try {
        // make_buffer_descriptor validates: nbytes > 0, the name a valid body.
        desc =
            make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, access, nbytes,
                                   {reinterpret_cast<const uint8_t*>(name.data()), name.size()}, owner_worker_path_id);
    } catch (...) {
        minter->release(id);
        throw;
    }
    return std::unique_ptr<AdoptedOwner>(new AdoptedOwner(desc, object_base, minter, nullptr, name));
}

AdoptedOwner::AdoptedOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter,
                           ForkRegionTable* regions, std::string name)
    : BackingOwner(desc, base, minter), regions_(regions), name_(std::move(name)) {}

AdoptedOwner::~AdoptedOwner() { close_from_destructor(); }

int64_t AdoptedOwner::external_holders() const noexcept {
    if (regions_ == nullptr) return 0;
    try {
        return regions_->pins(desc_.identity);
    } catch (...) {
        return 0;
    }
}

namespace {

// The bytes are the user's: the creator only delists the fork region.
void delist(ForkRegionTable* regions, const CanonicalIdentity& id) noexcept {
    if (regions == nullptr) return;
    try {
        regions->remove(id);
    } catch (...) {
        // remove() allocates nothing; a failed lock is the only way here.
    }
}

}  // namespace

void AdoptedOwner::release_backing(bool creator) noexcept {
    if (creator) delist(regions_, desc_.identity);
}

std::function<void()> AdoptedOwner::creator_release_action() const {
    return [regions = regions_, id = desc_.identity] { delist(regions, id); };
}

}  // namespace simpler
