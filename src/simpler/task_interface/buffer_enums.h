// The attributes of a backing that cross the wire as raw u8: where it lives
// (AddressSpace), what it grants (AccessMode), and how to find it (BackendKind).
// Values are frozen (docs/internals/abi.md). Kernels may include this header; it declares no
// wire struct.
#pragma once

#include <cstdint>

namespace simpler {

enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };
enum class AccessMode : uint8_t { READ = 0, WRITE = 1, READWRITE = 2 };
enum class BackendKind : uint8_t {
    FORK_SHM = 0,
    POSIX_SHM = 1,
    VMM_WINDOW = 2,
    REMOTE_SIDECAR = 3,
    DEVICE_MALLOC = 4,
    FORK_COW = 5,
};
inline constexpr uint8_t BACKEND_KIND_COUNT = 6;

const char* address_space_name(uint8_t raw) noexcept;
const char* access_mode_name(uint8_t raw) noexcept;
const char* backend_kind_name(uint8_t raw) noexcept;

// True when a backing granting `granted` satisfies a request for `needed`
// (READWRITE satisfies both; READ and WRITE satisfy only themselves).
constexpr bool access_grants(AccessMode granted, AccessMode needed) noexcept {
    return granted == needed || granted == AccessMode::READWRITE;
}

static_assert(static_cast<uint8_t>(AddressSpace::HOST) == 0 && static_cast<uint8_t>(AddressSpace::DEVICE) == 1);
static_assert(static_cast<uint8_t>(AccessMode::READ) == 0 && static_cast<uint8_t>(AccessMode::WRITE) == 1 &&
              static_cast<uint8_t>(AccessMode::READWRITE) == 2);
static_assert(static_cast<uint8_t>(BackendKind::FORK_SHM) == 0 && static_cast<uint8_t>(BackendKind::POSIX_SHM) == 1 &&
              static_cast<uint8_t>(BackendKind::VMM_WINDOW) == 2 &&
              static_cast<uint8_t>(BackendKind::REMOTE_SIDECAR) == 3 &&
              static_cast<uint8_t>(BackendKind::DEVICE_MALLOC) == 4 &&
              static_cast<uint8_t>(BackendKind::FORK_COW) == 5);

}  // namespace simpler
