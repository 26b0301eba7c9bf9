// Device backings: wrap a device pointer that a chip's arena handed out into a
// DEVICE_MALLOC or VMM_WINDOW descriptor with a fresh identity, and record the
// owner chip in a DeviceOwnerTable. The arena itself (the bytes) belongs to the
// simulated chip; this file owns only the identity and the owner record.
//
// Throws std::invalid_argument for a null pointer, nbytes == 0, or an access the
// descriptor validator refuses.
#pragma once

#include <cstdint>

#include "simpler/task_interface/buffer.h"

namespace simpler {

class IdentityMinter;
class DeviceOwnerTable;

struct DeviceBacking {
    BufferDescriptor descriptor;
    uint32_t owner_chip = 0;
};

// kind must be DEVICE_MALLOC or VMM_WINDOW.
DeviceBacking wrap_device_pointer(BackendKind kind, uint64_t device_ptr, uint64_t nbytes, AccessMode access,
                                  uint32_t owner_chip, DeviceOwnerTable& owners, IdentityMinter* minter = nullptr,
                                  uint32_t owner_worker_path_id = 0);

// Releases the identity (when minted by this incarnation) and forgets the
// owner record. The device bytes are the arena's to free.
void release_device_backing(const DeviceBacking& b, DeviceOwnerTable& owners, IdentityMinter* minter = nullptr);

}  // namespace simpler
