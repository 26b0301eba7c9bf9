// BackingRetention: frees an owned host backing only once no unfinished task
// of this process names it. The owner hands over the free (BackingOwner::close
// in the creating process); the retention asks the engine which unfinished
// tasks name the identity (the use lookup: every one found is retained with
// retain()), and runs the free at once when none does, else when the last of
// them is released (release(): the task finished — succeeded, failed,
// poisoned, cancelled, or its child was lost — or its Worker closed). Once a
// free has run, the freed hook hears the identity (the engine sends every
// lane of every live Worker a forget for it) and wait_freed() returns.
//
// Only a released identity is ever retained, by the lookup at the release:
// the engine counts, per backing, the unfinished tasks naming it (one count
// per distinct backing a task names, at its submit and its finish), marks
// those and releases each as it finishes. A task submitted after
// the release cannot name the identity: the submit check refuses it
// (OwnedBackingTable::mark_released).
//
// Thread-safe (one mutex, never held while the lookup, a free or the hook
// runs). A free runs on the thread that released the last use, or on the
// releasing thread; it must not call back into the retention.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "simpler/task_interface/identity.h"

namespace simpler {

class BackingRetention {
public:
    using Free = std::function<void()>;
    // Retains (retain(id, n)) every unfinished task that names id.
    using UseScan = std::function<void(const CanonicalIdentity&)>;
    // Hears each identity once its free has run.
    using FreedHook = std::function<void(const CanonicalIdentity&)>;

    // The engine's side; either may be empty (no scan: nothing is in use).
    void set_hooks(UseScan scan, FreedHook freed);

    // `n` more unfinished tasks name id (called by the use lookup).
    void retain(const CanonicalIdentity& id, size_t n);
    // One of them finished; runs the free when it was the last use of a
    // released identity.
    void release(const CanonicalIdentity& id);

    // The owner releases id: runs `free` now when no unfinished task names it
    // (true), else parks it for the last release (false).
    bool free_when_unused(const CanonicalIdentity& id, Free free);
    // True while a free of id is parked or running.
    [[nodiscard]] bool pending(const CanonicalIdentity& id) const;
    // Blocks until no free of id is parked or running (at once when none is).
    void wait_freed(const CanonicalIdentity& id) const;
    // Parked frees.
    [[nodiscard]] size_t pending_count() const;

private:
    struct Entry {
        size_t uses = 0;
        Free free;             // set once the owner released the identity, until it runs
        bool freeing = false;  // the free is running (wait_freed still waits)
    };
    void run_free(const CanonicalIdentity& id, Free& free);

    mutable std::mutex mu_;
    mutable std::condition_variable freed_cv_;
    std::unordered_map<CanonicalIdentity, Entry> entries_;
    UseScan scan_;
    FreedHook freed_;
};

// The retention of this process's owners.
BackingRetention& process_backing_retention();

}  // namespace simpler
