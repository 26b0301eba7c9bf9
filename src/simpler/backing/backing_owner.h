// BackingOwner: the owner side of one host backing — its bytes, its identity,
// its descriptor and its lifecycle. Stays with the process that created it.
//
// Concrete owners: PosixShmOwner (posix_shm_owner.h) and ForkOwner
// (fork_owner.h, FORK_SHM and FORK_COW). Each is move-only through
// std::unique_ptr and releases only what it created: close() in a forked child
// that inherited a copy of an owner unmaps the child's copy and does nothing
// else (no unlink, no identity release).
//
// Exports: a host access path (the Python buffer protocol, a NumPy array)
// registers each live export of the bytes; close() refuses with
// ExportsAliveError while any export is alive, changes nothing, and can be
// retried. close() is idempotent. The owner trusts its own arguments only.
//
// Tasks: in the creating process, close() (and the destructor of an owner
// never closed) never frees bytes an unfinished task names. It marks the
// record released (a later submit naming it is refused), and hands the free
// to process_backing_retention() (backing_retention.h): at once when no
// unfinished task of this process names the identity, else when the last one
// finishes. The owner is closed() from the call on; free_pending() says
// whether the bytes are still there.
//
// Records: every owner lists its descriptor in process_owned_backings()
// (owned_backing_table.h) from construction until the creating process closes
// it; the submit path checks each host descriptor against that record.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <sys/types.h>

#include "simpler/task_interface/buffer.h"

namespace simpler {

class IdentityMinter;

// Thrown by close() while views of the bytes are exported (BufferError in Python).
class ExportsAliveError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class BackingOwner {
public:
    BackingOwner(const BackingOwner&) = delete;
    BackingOwner& operator=(const BackingOwner&) = delete;
    virtual ~BackingOwner() = default;

    // Owner-side address of byte 0; nullptr once closed.
    [[nodiscard]] uint8_t* data() const noexcept { return closed_ ? nullptr : base_; }
    [[nodiscard]] uint64_t nbytes() const noexcept { return desc_.nbytes; }
    [[nodiscard]] const BufferDescriptor& descriptor() const noexcept { return desc_; }
    [[nodiscard]] const CanonicalIdentity& identity() const noexcept { return desc_.identity; }
    [[nodiscard]] BackendKind backend() const noexcept { return static_cast<BackendKind>(desc_.backend_kind); }
    [[nodiscard]] AccessMode access() const noexcept { return static_cast<AccessMode>(desc_.access); }
    [[nodiscard]] bool closed() const noexcept { return closed_; }
    // Closed, and the free still waits for unfinished tasks that name it.
    [[nodiscard]] bool free_pending() const;
    // True in the process that created the backing (not in a forked child).
    [[nodiscard]] bool is_creator_process() const noexcept;

    // Export accounting for host access paths; add_export throws
    // std::runtime_error once closed.
    void add_export();
    void drop_export() noexcept;
    [[nodiscard]] int64_t export_count() const noexcept { return exports_.load(std::memory_order_acquire); }

    // Releases the backing; see the header comment. Throws ExportsAliveError
    // while exports are alive.
    void close();

protected:
    BackingOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter);
    // Backend-specific release: unmap always; unlink / deregister only when
    // `creator` is true. Called once, by close() or the destructor of the
    // concrete class, and never throws.
    virtual void release_backing(bool creator) noexcept = 0;
    // The creator's release_backing(true) as an action that no longer needs
    // this object (the free of a close() deferred past it).
    [[nodiscard]] virtual std::function<void()> creator_release_action() const = 0;
    // Holders of the bytes that the export count does not see (a ForkOwner's
    // pins by this process's ImportRegistry); close() refuses while non-zero.
    [[nodiscard]] virtual int64_t external_holders() const noexcept { return 0; }
    // Concrete destructors call this (a base destructor cannot reach the
    // derived release_backing).
    void close_from_destructor() noexcept;

    BufferDescriptor desc_;
    uint8_t* base_;

private:
    // The creator's close: the free (backend, record, identity) through the retention.
    void close_in_creator();

    IdentityMinter* minter_;
    pid_t creator_pid_;
    bool closed_ = false;
    std::atomic<int64_t> exports_{0};
};

}  // namespace simpler
