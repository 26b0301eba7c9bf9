#include "simpler/backing/backing_owner.h"

#include <unistd.h>

#include "simpler/backing/backing_retention.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/owned_backing_table.h"

namespace simpler {

BackingOwner::BackingOwner(const BufferDescriptor& desc, uint8_t* base, IdentityMinter* minter)
    : desc_(desc), base_(base), minter_(minter), creator_pid_(getpid()) {
    process_owned_backings().add(desc_);
}

bool BackingOwner::is_creator_process() const noexcept { return getpid() == creator_pid_; }

void BackingOwner::add_export() {
    if (closed_) throw std::runtime_error("Buffer " + desc_.identity.to_string() + " is closed");
    exports_.fetch_add(1, std::memory_order_acq_rel);
}

void BackingOwner::drop_export() noexcept { exports_.fetch_sub(1, std::memory_order_acq_rel); }

void BackingOwner::close() {
    if (closed_) return;
    const int64_t n = export_count() + external_holders();
    if (n > 0)
        throw ExportsAliveError("cannot close Buffer " + desc_.identity.to_string() + ": " + std::to_string(n) +
                                " exported view(s) or import(s) of its bytes are still alive; drop them and retry");
    if (is_creator_process()) {
        close_in_creator();
        return;
    }
    close_from_destructor();
}

bool BackingOwner::free_pending() const {
    return closed_ && is_creator_process() && process_backing_retention().pending(desc_.identity);
}

namespace {

// What the creator's free does after the backend let go of the bytes.
void drop_record(const CanonicalIdentity& id, IdentityMinter* minter) noexcept {
    try {
        process_owned_backings().remove(id);
    } catch (...) {
        // remove() allocates nothing; a failed lock is the only way here.
    }
    if (minter != nullptr) {
        try {
            minter->release(id);
        } catch (...) {
            // release() only throws if the OS random source fails on a fresh
            // incarnation, which cannot hold for an identity minted here.
        }
    }
}

}  // namespace

void BackingOwner::close_in_creator() {
    std::function<void()> backend = creator_release_action();
    const CanonicalIdentity id = desc_.identity;
    IdentityMinter* minter = minter_;
    process_owned_backings().mark_released(id);
    closed_ = true;
    base_ = nullptr;
    process_backing_retention().free_when_unused(id, [backend = std::move(backend), id, minter] {
        backend();
        drop_record(id, minter);
    });
}

void BackingOwner::close_from_destructor() noexcept {
    if (closed_) return;
    const bool creator = is_creator_process();
    if (creator) {
        try {
            close_in_creator();
            return;
        } catch (...) {
            // No memory for the deferred free: free now, as before tasks were counted.
        }
    }
    closed_ = true;
    release_backing(creator);
    if (creator) drop_record(desc_.identity, minter_);
    base_ = nullptr;
}

}  // namespace simpler
