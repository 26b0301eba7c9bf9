// The POSIX shm name of a backing, derived from its identity:
//   "sp" + 16 hex digits of the owner nonce + "-" + hex buffer_id + "g" + hex generation
// e.g. "sp0a1b2c3d4e5f6071-1bg1". At most 32 bytes of printable ASCII without
// '/', which is what a POSIX_SHM descriptor body must be (docs/internals/abi.md); the leading
// '/' that shm_open wants is added at the syscall and never stored.
//
// Pure functions; they trust nothing and refuse identities whose name would not
// fit (buffer_id above 0xFFFFFFFF or generation above 0xFFFF).
#pragma once

#include <optional>
#include <string>

#include "simpler/task_interface/identity.h"

namespace simpler {

inline constexpr const char* SHM_NAME_PREFIX = "sp";
inline constexpr size_t SHM_NAME_MAX_BYTES = 32;

// The name body for id; std::nullopt when it would exceed 32 bytes.
std::optional<std::string> shm_name_for(const CanonicalIdentity& id);

// "sp" + the 16 hex digits of an owner nonce: every name minted by that
// incarnation starts with this (leak checks look for it).
std::string shm_name_prefix_for(const uint8_t (&owner_instance_id)[OWNER_INSTANCE_ID_BYTES]);

// "/" + body, for shm_open / shm_unlink.
std::string shm_syscall_path(const std::string& body);

}  // namespace simpler
