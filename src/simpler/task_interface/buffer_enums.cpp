#include "simpler/task_interface/buffer_enums.h"

namespace simpler {

const char* address_space_name(uint8_t raw) noexcept {
    switch (raw) {
        case 0: return "HOST";
        case 1: return "DEVICE";
        default: return "UNKNOWN";
    }
}

const char* access_mode_name(uint8_t raw) noexcept {
    switch (raw) {
        case 0: return "READ";
        case 1: return "WRITE";
        case 2: return "READWRITE";
        default: return "UNKNOWN";
    }
}

const char* backend_kind_name(uint8_t raw) noexcept {
    static constexpr const char* names[BACKEND_KIND_COUNT] = {"FORK_SHM",       "POSIX_SHM",     "VMM_WINDOW",
                                                              "REMOTE_SIDECAR", "DEVICE_MALLOC", "FORK_COW"};
    return raw < BACKEND_KIND_COUNT ? names[raw] : "UNKNOWN";
}

}  // namespace simpler
