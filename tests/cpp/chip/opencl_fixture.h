// Whether the OpenCL tests run: they need an OpenCL device (./dev installs
// PoCL's CPU device). Without one they skip, unless SIMPLER_REQUIRE_OPENCL=1
// (./dev test sets it), where a missing device fails them.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "simpler/chip/device_catalog.h"

// Whether the OpenCL tests run here: an OpenCL device is found, or
// SIMPLER_REQUIRE_OPENCL=1 asks for them (they then fail without one). For
// parameter lists, which a test cannot skip.
inline bool opencl_tests_run() noexcept {
    const char* required = std::getenv("SIMPLER_REQUIRE_OPENCL");
    if (required != nullptr && std::strcmp(required, "1") == 0) return true;
    try {
        return !::simpler::chip::find_devices({::simpler::chip::DeviceKind::OPENCL, "", 0}).empty();
    } catch (const std::exception&) {
        return false;
    }
}

// GTEST_SKIP()s (or fails) the calling test when no OpenCL device is found.
#define SIMPLER_REQUIRE_OPENCL_DEVICE()                                                   \
    do {                                                                                  \
        std::string why_;                                                                 \
        try {                                                                             \
            ::simpler::chip::find_devices({::simpler::chip::DeviceKind::OPENCL, "", 0});  \
        } catch (const std::exception& e_) {                                              \
            why_ = e_.what();                                                             \
        }                                                                                 \
        if (!why_.empty()) {                                                              \
            const char* required_ = std::getenv("SIMPLER_REQUIRE_OPENCL");                \
            if (required_ != nullptr && std::strcmp(required_, "1") == 0) FAIL() << why_; \
            GTEST_SKIP() << why_;                                                         \
        }                                                                                 \
    } while (0)
