#include "simpler/backing/device_owner_table.h"

namespace simpler {

void DeviceOwnerTable::record(const CanonicalIdentity& id, uint32_t chip_index) {
    std::lock_guard lock(mu_);
    owners_[id] = chip_index;
}

void DeviceOwnerTable::forget(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    owners_.erase(id);
}

std::optional<uint32_t> DeviceOwnerTable::owner_of(const CanonicalIdentity& id) const {
    std::lock_guard lock(mu_);
    const auto it = owners_.find(id);
    if (it == owners_.end()) return std::nullopt;
    return it->second;
}

}  // namespace simpler
