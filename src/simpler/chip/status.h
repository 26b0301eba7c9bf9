// ChipStatus: the status codes every chip ABI call returns (kernels, chip
// orchestrations, the orchestration ops). 0 is success; every other value is a
// failure whose message travels beside it. Plain int32_t on the ABI so a
// library built by another compiler agrees on the bytes.
#pragma once

#include <cstdint>

namespace simpler::chip {

enum ChipStatus : int32_t {
    CHIP_OK = 0,
    CHIP_ERR_INVALID_ARGUMENT = 1,  // a malformed tensor, tag, count or id
    CHIP_ERR_NOT_FOUND = 2,         // no kernel / orchestration of that name
    CHIP_ERR_OUT_OF_MEMORY = 3,     // the device arena cannot fit the request
    CHIP_ERR_RUN_FAILED = 4,        // the run already failed; no further work is accepted
    CHIP_ERR_KERNEL = 5,            // a kernel's own failure (any non-zero kernel return also counts)
};

// Version of the kernel / orchestration ABI (payload layout, ops table, library
// table). A library built against another version is refused at load.
inline constexpr uint32_t CHIP_ABI_VERSION = 2;

const char* chip_status_name(int32_t status) noexcept;

}  // namespace simpler::chip
