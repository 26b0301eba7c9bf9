#include "simpler/backing/owned_backing_table.h"

#include <cstring>

#include "simpler/backing/identity_minter.h"

namespace simpler {

namespace {

bool is_fork(uint8_t kind) noexcept {
    return kind == static_cast<uint8_t>(BackendKind::FORK_SHM) || kind == static_cast<uint8_t>(BackendKind::FORK_COW);
}

// Where a consumer finds the bytes: the shm name, or the base address of a
// fork region (both fork kinds share one key: an address is one region).
std::string location_key(const BufferDescriptor& d) {
    std::string key(1, is_fork(d.backend_kind) ? 'F' : static_cast<char>('0' + d.backend_kind));
    key.append(reinterpret_cast<const char*>(d.body), d.body_len <= DESC_MAX_BYTES ? d.body_len : DESC_MAX_BYTES);
    return key;
}

std::string location_text(const BufferDescriptor& d) {
    if (is_fork(d.backend_kind)) {
        char hex[24];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(descriptor_address(d)));
        return std::string("base address ") + hex;
    }
    const size_t n = d.body_len <= DESC_MAX_BYTES ? d.body_len : DESC_MAX_BYTES;
    std::string name;
    for (size_t i = 0; i < n; ++i) {
        const char c = static_cast<char>(d.body[i]);
        name += c >= 0x20 && c < 0x7f ? c : '?';
    }
    return "shm name '" + name + "'";
}

std::string describe(const BufferDescriptor& d) {
    return std::string(backend_kind_name(d.backend_kind)) + ", " + location_text(d) + ", " + std::to_string(d.nbytes) +
           " B, grants " + access_mode_name(d.access);
}

}  // namespace

void OwnedBackingTable::add(const BufferDescriptor& d) {
    std::lock_guard lock(mu_);
    by_identity_[d.identity] = Record{d, false};
    by_location_[location_key(d)] = d.identity;
}

void OwnedBackingTable::remove(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    const auto it = by_identity_.find(id);
    if (it == by_identity_.end()) return;
    const auto loc = by_location_.find(location_key(it->second.descriptor));
    if (loc != by_location_.end() && loc->second == id) by_location_.erase(loc);
    by_identity_.erase(it);
}

std::string OwnedBackingTable::problem(const BufferDescriptor& d, IdentityMinter* minter) const {
    {
        std::lock_guard lock(mu_);
        const auto it = by_identity_.find(d.identity);
        if (it != by_identity_.end()) {
            if (it->second.released)
                return "buffer " + d.identity.to_string() +
                       " was released (close() or release_buffer); its free is pending until the tasks that name it "
                       "finish, and a task may not name it any more";
            const BufferDescriptor& r = it->second.descriptor;
            const bool same_bytes = r.backend_kind == d.backend_kind && r.address_space == d.address_space &&
                                    r.nbytes == d.nbytes && r.body_len == d.body_len &&
                                    std::memcmp(r.body, d.body, DESC_MAX_BYTES) == 0;
            const bool grant_ok = d.access <= static_cast<uint8_t>(AccessMode::READWRITE) &&
                                  grant_within(static_cast<AccessMode>(d.access), static_cast<AccessMode>(r.access));
            if (same_bytes && grant_ok) return {};
            if (!same_bytes)
                return "the descriptor disagrees with its owner's record (" + describe(d) + "; the owner handed out " +
                       describe(r) + ")";
            return std::string("the descriptor grants ") + access_mode_name(d.access) + ", but its owner granted " +
                   access_mode_name(r.access) + " (" + describe(r) + ")";
        }
        const auto loc = by_location_.find(location_key(d));
        if (loc != by_location_.end())
            return "the " + location_text(d) + " belongs to buffer " + loc->second.to_string() +
                   ", not to the identity the descriptor names";
    }
    IdentityMinter& m = minter != nullptr ? *minter : process_identity_minter();
    const Liveness l = m.check_live(d.identity);
    if (l.status == LivenessStatus::NOT_MINTED_HERE) return {};
    if (l.live()) return "identity " + d.identity.to_string() + " is live but no host buffer of this process has it";
    return describe_liveness(d.identity, l);
}

void OwnedBackingTable::mark_released(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    const auto it = by_identity_.find(id);
    if (it != by_identity_.end()) it->second.released = true;
}

bool OwnedBackingTable::contains(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    return by_identity_.count(id) != 0;
}

size_t OwnedBackingTable::size() const {
    std::lock_guard lock(mu_);
    return by_identity_.size();
}

OwnedBackingTable& process_owned_backings() {
    static OwnedBackingTable table;
    return table;
}

}  // namespace simpler
