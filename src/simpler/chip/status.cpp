#include "simpler/chip/status.h"

namespace simpler::chip {

const char* chip_status_name(int32_t status) noexcept {
    switch (status) {
        case CHIP_OK: return "OK";
        case CHIP_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
        case CHIP_ERR_NOT_FOUND: return "NOT_FOUND";
        case CHIP_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
        case CHIP_ERR_RUN_FAILED: return "RUN_FAILED";
        case CHIP_ERR_KERNEL: return "KERNEL";
        default: return "UNKNOWN";
    }
}

}  // namespace simpler::chip
