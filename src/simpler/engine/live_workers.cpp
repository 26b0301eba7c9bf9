#include "simpler/engine/live_workers.h"

#include <algorithm>

#include "simpler/backing/backing_retention.h"
#include "simpler/engine/worker.h"

namespace simpler {

void LiveWorkers::add(Worker* w) {
    std::lock_guard lock(mu_);
    workers_.push_back(w);
}

void LiveWorkers::remove(Worker* w) {
    std::unique_lock lock(mu_);
    workers_.erase(std::remove(workers_.begin(), workers_.end(), w), workers_.end());
    unpinned_.wait(lock, [&] { return pins_.count(w) == 0; });
}

void LiveWorkers::hold_users(const CanonicalIdentity& id) {
    std::vector<Worker*> visit;
    {
        std::lock_guard lock(mu_);
        for (Worker* w : workers_) {
            if (!w->in_owner_process()) continue;
            visit.push_back(w);
            ++pins_[w];
        }
    }
    for (Worker* w : visit) {
        try {
            w->hold_users(id);
        } catch (...) {
            // Unpinned below whatever happens; a Worker that cannot scan holds nothing.
        }
        std::lock_guard lock(mu_);
        if (--pins_[w] == 0) pins_.erase(w);
        unpinned_.notify_all();
    }
}

void LiveWorkers::forget(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    for (Worker* w : workers_)
        if (w->in_owner_process()) w->forget(std::span<const CanonicalIdentity>(&id, 1));
}

size_t LiveWorkers::size() const {
    std::lock_guard lock(mu_);
    return workers_.size();
}

LiveWorkers& process_live_workers() {
    static LiveWorkers* workers = [] {
        auto* w = new LiveWorkers();  // never destroyed: a retention hook may run at exit
        process_backing_retention().set_hooks([w](const CanonicalIdentity& id) { w->hold_users(id); },
                                              [w](const CanonicalIdentity& id) { w->forget(id); });
        return w;
    }();
    return *workers;
}

}  // namespace simpler
