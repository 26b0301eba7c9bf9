// The simulated device through the device interface: its memory, its copies
// (complete when they return), an adopted range, its facts in both modes, and
// a launch of a registered kernel and of an id nothing registered.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/chip/simulated_device.h"

using namespace simpler::chip;

namespace {

int32_t needs_one_scalar(const KernelArgs* a) {
    if (a->scalar_count != 1) return kernel_fail(a, "expected one scalar, got %u", a->scalar_count);
    return CHIP_OK;
}

}  // namespace

TEST(SimulatedDevice, CopiesMoveBytesInAndOutOfItsMemory) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20, .host_addressable = false}};
    EXPECT_EQ(device.facts().kind, DeviceKind::SIMULATED);
    EXPECT_FALSE(device.facts().unified_host_memory);
    const uint64_t block = device.alloc(256);
    EXPECT_EQ(device.host_address(block), nullptr);
    std::vector<unsigned char> in(256), out(256, 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
    device.wait(device.copy_to_device(block, in.data(), in.size()));
    device.wait(device.copy_to_host(out.data(), block, out.size()));
    device.synchronize();
    EXPECT_EQ(in, out);
    EXPECT_THROW(device.copy_to_host(out.data(), block + (1 << 20), 16), std::invalid_argument);
    EXPECT_TRUE(device.try_free(block));
    EXPECT_FALSE(device.try_free(block));
}

TEST(SimulatedDevice, AnAdoptedRangeIsItsMemoryAndAnOverlapIsRefused) {
    KernelRegistry kernels;
    SimulatedDevice device{kernels, {.memory_bytes = 1 << 20}};
    std::vector<unsigned char> heap(4096, 0);
    const auto base = reinterpret_cast<uint64_t>(heap.data());
    EXPECT_FALSE(device.contains(base, 16));
    device.adopt_range(base, heap.size());
    EXPECT_TRUE(device.contains(base + 100, 16));
    EXPECT_EQ(device.host_address(base + 8), heap.data() + 8);
    const char msg[] = "adopted";
    device.copy_to_device(base + 8, msg, sizeof msg);
    EXPECT_EQ(std::memcmp(heap.data() + 8, msg, sizeof msg), 0);
    EXPECT_THROW(device.adopt_range(base + 64, 64), std::invalid_argument);
    const uint64_t block = device.alloc(64);
    EXPECT_THROW(device.adopt_range(block, 64), std::invalid_argument);
}

TEST(SimulatedDevice, LaunchRunsTheRegisteredKernelAndNamesAnUnknownId) {
    KernelRegistry kernels;
    const uint32_t id = kernels.add_kernel("test.one_scalar", needs_one_scalar);
    SimulatedDevice device{kernels};
    EXPECT_TRUE(device.facts().unified_host_memory);
    char error[KERNEL_ERROR_CAPACITY] = {};
    const uint64_t scalar = 3;
    const KernelArgs one{nullptr, &scalar, 0, 1, 0, KERNEL_ERROR_CAPACITY, error};
    EXPECT_EQ(device.launch(id, one), CHIP_OK);
    const KernelArgs none{nullptr, nullptr, 0, 0, 0, KERNEL_ERROR_CAPACITY, error};
    EXPECT_EQ(device.launch(id, none), CHIP_ERR_KERNEL);
    EXPECT_STREQ(error, "expected one scalar, got 0");
    EXPECT_EQ(device.launch(id + 1, one), CHIP_ERR_KERNEL);
    EXPECT_NE(std::string(error).find("no kernel has id"), std::string::npos) << error;
}
