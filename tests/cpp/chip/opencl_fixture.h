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

// Why no OpenCL device is found (what find_devices refused with); empty when one is.
inline std::string opencl_missing() {
    try {
        ::simpler::chip::find_devices({::simpler::chip::DeviceKind::OPENCL, "", 0});
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

// True when SIMPLER_REQUIRE_OPENCL=1: a missing device fails the OpenCL tests.
inline bool opencl_required() noexcept {
    const char* required = std::getenv("SIMPLER_REQUIRE_OPENCL");
    return required != nullptr && std::strcmp(required, "1") == 0;
}

// Whether the OpenCL tests run here: an OpenCL device is found, or they are
// required (they then fail without one). For parameter lists, which a test
// cannot skip.
inline bool opencl_tests_run() { return opencl_required() || opencl_missing().empty(); }

// GTEST_SKIP()s (or fails) the calling test when no OpenCL device is found.
#define SIMPLER_REQUIRE_OPENCL_DEVICE()                                 \
    do {                                                                \
        if (const std::string why_ = opencl_missing(); !why_.empty()) { \
            if (opencl_required()) FAIL() << why_;                      \
            GTEST_SKIP() << why_;                                       \
        }                                                               \
    } while (0)
