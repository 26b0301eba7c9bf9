#include "simpler/backing/backing_retention.h"

#include <utility>

namespace simpler {

void BackingRetention::set_hooks(UseScan scan, FreedHook freed) {
    std::lock_guard lock(mu_);
    scan_ = std::move(scan);
    freed_ = std::move(freed);
}

void BackingRetention::retain(const CanonicalIdentity& id, size_t n) {
    if (n == 0) return;
    std::lock_guard lock(mu_);
    entries_[id].uses += n;
}

void BackingRetention::release(const CanonicalIdentity& id) {
    Free free;
    {
        std::lock_guard lock(mu_);
        const auto it = entries_.find(id);
        if (it == entries_.end() || it->second.uses == 0) return;
        if (--it->second.uses > 0 || !it->second.free) return;
        free = std::move(it->second.free);
        it->second.free = nullptr;
        it->second.freeing = true;
    }
    run_free(id, free);
}

bool BackingRetention::free_when_unused(const CanonicalIdentity& id, Free free) {
    UseScan scan;
    {
        std::lock_guard lock(mu_);
        scan = scan_;
    }
    // Outside the lock: the scan retains what it finds, and a task it found
    // may finish (and release) before the free is parked below.
    if (scan) scan(id);
    {
        std::lock_guard lock(mu_);
        Entry& e = entries_[id];
        if (e.uses > 0) {
            e.free = std::move(free);
            return false;
        }
        e.freeing = true;
    }
    run_free(id, free);
    return true;
}

void BackingRetention::run_free(const CanonicalIdentity& id, Free& free) {
    free();
    FreedHook hook;
    {
        std::lock_guard lock(mu_);
        hook = freed_;
        entries_.erase(id);
    }
    freed_cv_.notify_all();
    if (hook) hook(id);
}

bool BackingRetention::pending(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = entries_.find(id);
    return it != entries_.end() && (it->second.free || it->second.freeing);
}

void BackingRetention::wait_freed(const CanonicalIdentity& id) const {
    std::unique_lock lock(mu_);
    freed_cv_.wait(lock, [&] {
        const auto it = entries_.find(id);
        return it == entries_.end() || (!it->second.free && !it->second.freeing);
    });
}

size_t BackingRetention::pending_count() const {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& [id, e] : entries_) n += e.free || e.freeing ? 1 : 0;
    return n;
}

BackingRetention& process_backing_retention() {
    static BackingRetention retention;
    return retention;
}

}  // namespace simpler
