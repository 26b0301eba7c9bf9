// ForkRegionTable: the pre-fork host regions (FORK_SHM / FORK_COW backings)
// this process owns or inherited through fork, keyed by identity.
//
// A FORK_* descriptor carries a virtual address that is meaningful only in its
// owner and in children forked after the region was created. The
// ImportRegistry resolves such a descriptor only when this table holds the
// same identity with the same base, backend and at least nbytes: that is the
// evidence that the consumer is the owner or a forked descendant of it. The
// table lives in ordinary memory, so a child inherits the parent's entries as of
// the fork, which is exactly the set of regions valid in the child. A region
// the owner closes after the fork stays listed in the child (the child's
// private copy of the pages stays mapped there until it exits).
//
// Trust decision (documented in docs/internals/backings.md): the table does not prove the
// pages are still shared with the owner; it proves the address is one the
// owner handed out before the fork. Thread-safe (one mutex).
//
// Pins: an ImportRegistry of this process that resolves a region pins it, and
// the owner's close() refuses while it is pinned here (the registry hands out
// the owner's own address, so unmapping it would leave the import dangling).
// Pins are per process: a child's pins live in the child's copy of the table.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <unordered_map>

#include "simpler/backing/cow_write_watch.h"
#include "simpler/task_interface/buffer_enums.h"
#include "simpler/task_interface/identity.h"

namespace simpler {

struct ForkRegion {
    uint64_t base = 0;
    uint64_t nbytes = 0;
    BackendKind backend = BackendKind::FORK_SHM;
    uint32_t pins = 0;
    pid_t creator = 0;  // the process that created the region (add() records it)
    // The region's pages are its own (a runtime mapping): a consumer may
    // protect every page it touches. False for adopted memory (adopted_owner.h),
    // whose first and last pages may hold other data of the process: a
    // consumer protects only the pages wholly inside it.
    bool owns_pages = true;
    // A FORK_COW region's creator watches its own writes once it has forked
    // (watch_cow_writes); why it could not, when it could not.
    bool watched = false;
    CowWriteWatch watch{};
    std::string watch_error{};
};

class ForkRegionTable {
public:
    void add(const CanonicalIdentity& id, const ForkRegion& region);
    // Delists id; the creator's watch over it ends (its pages writable again).
    void remove(const CanonicalIdentity& id);
    // True when id is listed with this base and backend and at least nbytes.
    [[nodiscard]] bool contains(const CanonicalIdentity& id, uint64_t base, uint64_t nbytes, BackendKind backend) const;
    // contains() and, when true, one more pin; unpin() drops one.
    bool pin(const CanonicalIdentity& id, uint64_t base, uint64_t nbytes, BackendKind backend);
    void unpin(const CanonicalIdentity& id);
    [[nodiscard]] uint32_t pins(const CanonicalIdentity& id) const;
    // True when id is listed and this process created it (not a forked child).
    [[nodiscard]] bool created_here(const CanonicalIdentity& id) const;
    // True when id is listed and its pages are its own (ForkRegion::owns_pages).
    [[nodiscard]] bool owns_pages(const CanonicalIdentity& id) const;
    [[nodiscard]] size_t size() const;

    // Call in a process that has just forked children: each FORK_COW region it
    // created and does not watch yet is watched from now on (cow_write_watch.h).
    void watch_cow_writes();
    // Empty unless id is a FORK_COW region this process created and wrote
    // after children were forked from it (or could not watch): then why a task
    // naming it is refused.
    [[nodiscard]] std::string cow_write_problem(const CanonicalIdentity& id) const;

private:
    mutable std::mutex mu_;
    std::unordered_map<CanonicalIdentity, ForkRegion> regions_;
};

// The table the fork owners of this process register in by default.
ForkRegionTable& process_fork_regions();

}  // namespace simpler
