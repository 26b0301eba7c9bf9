// Which CUDA driver the chip tests drive: the test driver library
// (tests/cpp/cuda_test_driver.cpp, its path in SIMPLER_CUDA_TEST_DRIVER)
// unless SIMPLER_REQUIRE_CUDA=1, where the machine's own driver is used (a GPU
// run: scripts/gpu_check.sh). The driver is loaded once per process, so call
// this before a test first opens a CUDA device.
#pragma once

#include <cstdlib>
#include <cstring>

// True when SIMPLER_REQUIRE_CUDA=1: the tests drive the machine's GPU.
inline bool cuda_required() noexcept {
    const char* required = std::getenv("SIMPLER_REQUIRE_CUDA");
    return required != nullptr && std::strcmp(required, "1") == 0;
}

inline void use_cuda_test_driver_unless_required() {
    if (!cuda_required()) setenv("SIMPLER_CUDA_LIBRARY", SIMPLER_CUDA_TEST_DRIVER, 1);
}
