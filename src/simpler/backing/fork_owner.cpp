#include "simpler/backing/fork_owner.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>

#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/identity_minter.h"

namespace simpler {

std::unique_ptr<ForkOwner> ForkOwner::create_shared(uint64_t nbytes, AccessMode access, IdentityMinter* minter,
                                                    ForkRegionTable* regions, uint32_t owner_worker_path_id) {
    return create(BackendKind::FORK_SHM, nbytes, access, minter, regions, owner_worker_path_id);
}

std::unique_ptr<ForkOwner> ForkOwner::create_cow(uint64_t nbytes, IdentityMinter* minter, ForkRegionTable* regions,
                                                 uint32_t owner_worker_path_id) {
    return create(BackendKind::FORK_COW, nbytes, AccessMode::READ, minter, regions, owner_worker_path_id);
}

std::unique_ptr<ForkOwner> ForkOwner::create(BackendKind kind, uint64_t nbytes, AccessMode access,
                                             IdentityMinter* minter, ForkRegionTable* regions,
                                             uint32_t owner_worker_path_id) {
    const char* who = kind == BackendKind::FORK_SHM ? "ForkOwner(FORK_SHM)" : "ForkOwner(FORK_COW)";
    if (kind != BackendKind::FORK_SHM && kind != BackendKind::FORK_COW)
        throw std::invalid_argument("ForkOwner: backend must be FORK_SHM or FORK_COW");
    if (nbytes == 0) throw std::invalid_argument(std::string(who) + ": nbytes must be > 0");
    if (kind == BackendKind::FORK_COW && access != AccessMode::READ)
        throw std::invalid_argument(std::string(who) + ": a copy-on-write backing grants READ only");
    if (minter == nullptr) minter = &process_identity_minter();
    if (regions == nullptr) regions = &process_fork_regions();
    const int flags = MAP_ANONYMOUS | (kind == BackendKind::FORK_SHM ? MAP_SHARED : MAP_PRIVATE);
    void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error(std::string(who) + ": mmap failed: " + std::strerror(errno));
    const CanonicalIdentity id = minter->mint();
    BufferDescriptor desc;
    try {
        desc = make_address_descriptor(id, kind, access, nbytes, reinterpret_cast<uint64_t>(p), owner_worker_path_id);
    } catch (...) {
        munmap(p, nbytes);
        minter->release(id);
        throw;
    }
    regions->add(id, ForkRegion{reinterpret_cast<uint64_t>(p), nbytes, kind});
    return std::unique_ptr<ForkOwner>(new ForkOwner(desc, static_cast<uint8_t*>(p), minter, regions));
}

ForkOwner::ForkOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, ForkRegionTable* regions)
    : BackingOwner(desc, base, minter), regions_(regions) {}

ForkOwner::~ForkOwner() { close_from_destructor(); }

int64_t ForkOwner::external_holders() const noexcept {
    try {
        return regions_->pins(desc_.identity);
    } catch (...) {
        return 0;
    }
}

namespace {

void release_region(uint8_t* base, uint64_t nbytes, ForkRegionTable* regions, const CanonicalIdentity& id,
                    bool creator) noexcept {
    if (creator) {  // first: the watch over the pages ends before they are unmapped (cow_write_watch.h)
        try {
            regions->remove(id);
        } catch (...) {
            // remove() allocates nothing; a failed lock is the only way here.
        }
    }
    if (base != nullptr) munmap(base, nbytes);
}

}  // namespace

void ForkOwner::release_backing(bool creator) noexcept {
    release_region(base_, desc_.nbytes, regions_, desc_.identity, creator);
}

std::function<void()> ForkOwner::creator_release_action() const {
    return [base = base_, nbytes = desc_.nbytes, regions = regions_, id = desc_.identity] {
        release_region(base, nbytes, regions, id, true);
    };
}

}  // namespace simpler
