#include "simpler/backing/backing_owner.h"

#include <unistd.h>

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
    close_from_destructor();
}

void BackingOwner::close_from_destructor() noexcept {
    if (closed_) return;
    closed_ = true;
    const bool creator = is_creator_process();
    release_backing(creator);
    if (creator) {
        try {
            process_owned_backings().remove(desc_.identity);
        } catch (...) {
            // remove() allocates nothing; a failed lock is the only way here.
        }
    }
    if (creator && minter_ != nullptr) {
        try {
            minter_->release(desc_.identity);
        } catch (...) {
            // release() only throws if the OS random source fails on a fresh
            // incarnation, which cannot hold for an identity minted here.
        }
    }
    base_ = nullptr;
}

}  // namespace simpler
