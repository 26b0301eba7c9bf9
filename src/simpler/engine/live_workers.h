// LiveWorkers: the Workers of this process between init() and close(), for the
// two things that concern all of them at once when an owned host backing is
// released (backing_retention.h):
//   - hold_users(id), the retention's use lookup: every live Worker marks its
//     unfinished tasks that name id (Worker::hold_users), so the free waits
//     for exactly those;
//   - forget(id), the retention's freed hook: every lane of every live Worker
//     is sent a forget for id (Worker::forget).
// process_live_workers() installs both as the hooks of
// process_backing_retention() on first use.
//
// Locks: the list's mutex is never held while a Worker's engine mutex is
// taken (hold_users pins the Workers it visits, and remove() waits for the
// pins), and forget() takes only each Worker's forget mutex under it, so a
// free that runs under one Worker's engine mutex may call forget(). In a
// forked copy of the process the parent's Workers are skipped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "simpler/task_interface/identity.h"

namespace simpler {

class Worker;

class LiveWorkers {
public:
    void add(Worker* w);
    // Returns once no hold_users() is using w.
    void remove(Worker* w);
    void hold_users(const CanonicalIdentity& id);
    void forget(const CanonicalIdentity& id);
    [[nodiscard]] size_t size() const;

private:
    mutable std::mutex mu_;
    std::condition_variable unpinned_;
    std::vector<Worker*> workers_;
    std::unordered_map<Worker*, size_t> pins_;
};

LiveWorkers& process_live_workers();

}  // namespace simpler
