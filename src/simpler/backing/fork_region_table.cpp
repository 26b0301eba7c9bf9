#include "simpler/backing/fork_region_table.h"

#include <unistd.h>

namespace simpler {

void ForkRegionTable::add(const CanonicalIdentity& id, const ForkRegion& region) {
    std::lock_guard lock(mu_);
    ForkRegion& r = regions_[id];
    r = region;
    r.creator = getpid();
}

void ForkRegionTable::remove(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    regions_.erase(id);
}

bool ForkRegionTable::contains(const CanonicalIdentity& id, uint64_t base, uint64_t nbytes, BackendKind backend) const {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    return it != regions_.end() && it->second.base == base && it->second.backend == backend &&
           nbytes <= it->second.nbytes;
}

bool ForkRegionTable::pin(const CanonicalIdentity& id, uint64_t base, uint64_t nbytes, BackendKind backend) {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    if (it == regions_.end() || it->second.base != base || it->second.backend != backend || nbytes > it->second.nbytes)
        return false;
    ++it->second.pins;
    return true;
}

void ForkRegionTable::unpin(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    if (it != regions_.end() && it->second.pins > 0) --it->second.pins;
}

uint32_t ForkRegionTable::pins(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    return it == regions_.end() ? 0 : it->second.pins;
}

bool ForkRegionTable::created_here(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    return it != regions_.end() && it->second.creator == getpid();
}

bool ForkRegionTable::owns_pages(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    return it != regions_.end() && it->second.owns_pages;
}

size_t ForkRegionTable::size() const {
    std::lock_guard lock(mu_);
    return regions_.size();
}

ForkRegionTable& process_fork_regions() {
    static ForkRegionTable table;
    return table;
}

}  // namespace simpler
