#include "simpler/backing/device_wrappers.h"

#include <stdexcept>

#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/identity_minter.h"

namespace simpler {

DeviceBacking wrap_device_pointer(BackendKind kind, uint64_t device_ptr, uint64_t nbytes, AccessMode access,
                                  uint32_t owner_chip, DeviceOwnerTable& owners, IdentityMinter* minter,
                                  uint32_t owner_worker_path_id) {
    if (kind != BackendKind::DEVICE_MALLOC && kind != BackendKind::VMM_WINDOW)
        throw std::invalid_argument("wrap_device_pointer: backend must be DEVICE_MALLOC or VMM_WINDOW");
    if (device_ptr == 0) throw std::invalid_argument("wrap_device_pointer: device pointer must be non-null");
    if (nbytes == 0) throw std::invalid_argument("wrap_device_pointer: nbytes must be > 0");
    if (minter == nullptr) minter = &process_identity_minter();
    const CanonicalIdentity id = minter->mint();
    DeviceBacking b;
    try {
        b.descriptor = make_address_descriptor(id, kind, access, nbytes, device_ptr, owner_worker_path_id);
    } catch (...) {
        minter->release(id);
        throw;
    }
    b.owner_chip = owner_chip;
    owners.record(id, owner_chip);
    return b;
}

void release_device_backing(const DeviceBacking& b, DeviceOwnerTable& owners, IdentityMinter* minter) {
    if (minter == nullptr) minter = &process_identity_minter();
    owners.forget(b.descriptor.identity);
    minter->release(b.descriptor.identity);
}

}  // namespace simpler
