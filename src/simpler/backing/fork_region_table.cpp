#include "simpler/backing/fork_region_table.h"

#include <exception>
#include <string>
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
    const auto it = regions_.find(id);
    if (it == regions_.end()) return;
    stop_cow_write_watch(it->second.watch);
    regions_.erase(it);
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

void ForkRegionTable::watch_cow_writes() {
    std::lock_guard lock(mu_);
    const pid_t self = getpid();
    for (auto& [id, r] : regions_) {
        if (r.backend != BackendKind::FORK_COW || r.creator != self || r.watched || !r.watch_error.empty()) continue;
        try {
            r.watch = start_cow_write_watch(r.base, r.nbytes, r.owns_pages);
            r.watched = true;
        } catch (const std::exception& e) {
            r.watch_error = e.what();
        }
    }
}

std::string ForkRegionTable::cow_write_problem(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = regions_.find(id);
    if (it == regions_.end() || it->second.backend != BackendKind::FORK_COW || it->second.creator != getpid())
        return {};
    const ForkRegion& r = it->second;
    if (!r.watch_error.empty())
        return "the host's writes to this FORK_COW buffer after init() cannot be watched (" + r.watch_error +
               "), so a child could read stale bytes; put it in shared memory (FORK_SHM, POSIX_SHM)";
    if (r.watched && cow_written(r.watch))
        return "the host wrote this FORK_COW buffer after init() forked the children, who hold its bytes as of the "
               "fork: a task would read stale bytes. Write a FORK_COW buffer only before init(); put bytes the host "
               "changes later in shared memory (FORK_SHM before init(), POSIX_SHM after)";
    return {};
}

ForkRegionTable& process_fork_regions() {
    static ForkRegionTable table;
    return table;
}

}  // namespace simpler
