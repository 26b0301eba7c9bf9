// DeviceOwnerTable: which chip owns each DEVICE backing (DEVICE_MALLOC /
// VMM_WINDOW) this process knows of, keyed by identity.
//
// A device pointer is meaningful only on its owner chip, and the descriptor
// does not say which chip that is (owner_worker_path_id is diagnostic and is
// never consulted). The process that wraps a device pointer records the owner
// here (device_wrappers.h); a chip endpoint's ImportRegistry resolves a DEVICE
// descriptor only when this table names that chip. An identity the table does
// not hold is refused, never guessed. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "simpler/task_interface/identity.h"

namespace simpler {

class DeviceOwnerTable {
public:
    void record(const CanonicalIdentity& id, uint32_t chip_index);
    void forget(const CanonicalIdentity& id);
    [[nodiscard]] std::optional<uint32_t> owner_of(const CanonicalIdentity& id) const;

private:
    mutable std::mutex mu_;
    std::unordered_map<CanonicalIdentity, uint32_t> owners_;
};

}  // namespace simpler
