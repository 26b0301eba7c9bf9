// PosixShmOwner: owns one POSIX shm object and its owner-side mapping.
//
// create() mints an identity, derives the name from it (shm_name.h), announces
// the name to this process's ShmTracker (shm_tracker.h: the name is unlinked
// even if the process dies without doing it), creates the object
// O_CREAT|O_EXCL with mode 0600, sizes it, reserves every page
// (posix_fallocate: a full /dev/shm is an error here, never a SIGBUS at the
// first write) and maps it MAP_SHARED read-write (the owner fills its own bytes
// whatever it grants consumers). The descriptor names the object; consumers map
// it through the ImportRegistry. Only the creating process unlinks, and only
// the name it created; a forked child holding a copy unmaps its copy and
// nothing else. Closing releases the identity slot, so the next mint may reuse
// the buffer_id at generation + 1.
//
// Throws std::invalid_argument for nbytes == 0 (or beyond off_t) and
// std::runtime_error when the OS refuses (the message carries errno's text and
// the name) or /dev/shm has no room for nbytes (the message names the size, the
// free space and how to give /dev/shm more). A refused create leaves no object
// and no identity behind.
#pragma once

#include <memory>
#include <string>

#include "simpler/backing/backing_owner.h"

namespace simpler {

class IdentityMinter;

class PosixShmOwner final : public BackingOwner {
public:
    static std::unique_ptr<PosixShmOwner> create(uint64_t nbytes, AccessMode access = AccessMode::READWRITE,
                                                 IdentityMinter* minter = nullptr, uint32_t owner_worker_path_id = 0);
    // A host-local stand-in for a backing that lives on another host (a remote
    // task's REMOTE_SIDECAR argument, docs/internals/remote.md): an object of `source`'s
    // nbytes under a name of this process's own ("sp<nonce>-s<n>", never a
    // minted name), whose POSIX_SHM descriptor keeps the source's identity,
    // access and owner path. Nothing is minted or released; the object is
    // tracked, reserved, mapped and unlinked like any other. Same errors as create().
    static std::unique_ptr<PosixShmOwner> create_shadow(const BufferDescriptor& source);
    ~PosixShmOwner() override;

    // The name body (no leading '/').
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    PosixShmOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter, std::string name);
    static void check_size(uint64_t nbytes);
    // Creates, reserves and maps the object `name` for `desc`; on failure
    // releases desc's identity in `minter` (none: nothing to release).
    static std::unique_ptr<PosixShmOwner> make(const BufferDescriptor& desc, const std::string& name,
                                               IdentityMinter* minter);
    void release_backing(bool creator) noexcept override;
    [[nodiscard]] std::function<void()> creator_release_action() const override;

    std::string name_;
};

}  // namespace simpler
