// Worker: what it tells about itself while it runs (its children's state,
// its progress, its trace and edge log), read under the engine mutex.
#include <string>
#include <vector>

#include "simpler/engine/worker.h"

namespace simpler {

std::vector<EdgeExplanation> Worker::take_edge_log() {
    std::lock_guard lock(mu_);
    std::vector<EdgeExplanation> out = core_.edge_log();
    core_.clear_edge_log();
    return out;
}

std::vector<std::string> Worker::child_status() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const Lane& l : lanes_) out.push_back(l.ref.name() + (l.lost ? ": lost (" + l.lost_why + ")" : ": usable"));
    return out;
}

std::vector<TraceEvent> Worker::trace_events() const {
    std::lock_guard lock(mu_);
    return trace_ ? trace_->events() : std::vector<TraceEvent>{};
}

size_t Worker::trace_dropped() const {
    std::lock_guard lock(mu_);
    return trace_ ? trace_->dropped() : 0;
}

void Worker::trace_clear() {
    std::lock_guard lock(mu_);
    if (trace_) trace_->clear();
}

WorkerProgress Worker::progress() const {
    std::lock_guard lock(mu_);
    WorkerProgress p;
    p.submitted = core_.submitted();
    p.unfinished = core_.unfinished();
    p.lost = lost_count();
    p.children.reserve(lanes_.size());
    for (const Lane& l : lanes_) p.children.push_back({l.ref.name(), l.done, !l.in_flight.empty(), l.lost});
    return p;
}

std::vector<pid_t> Worker::child_pids() const {
    std::vector<pid_t> out;
    for (const Lane& l : lanes_)
        if (l.child.pid() > 0) out.push_back(l.child.pid());
    return out;
}

}  // namespace simpler
