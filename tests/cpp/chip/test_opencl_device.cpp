// The OpenCL device on the machine's OpenCL implementation (PoCL's CPU device
// under ./dev): finding it, staging through it (only written elements come
// back), and the refusals: memory larger than one buffer may be, a platform
// that does not exist. Its memory, copies with events and an adopted range
// keep the contract every device keeps (test_device_contract.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "opencl_fixture.h"
#include "simpler/chip/device_catalog.h"
#include "simpler/chip/staging.h"

#if SIMPLER_HAVE_OPENCL

#include "simpler/chip/opencl/opencl_device.h"

using namespace simpler::chip;
using chip_test::message_of;
using chip_test::view;

namespace {

DeviceChoice any_opencl_device() { return {DeviceKind::OPENCL, "", 0}; }

}  // namespace

TEST(OpenClDevice, FindsTheMachinesDevicesWithTheirFacts) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    const std::vector<DeviceFacts> found = find_devices(any_opencl_device());
    ASSERT_FALSE(found.empty());
    for (const DeviceFacts& f : found) {
        EXPECT_EQ(f.kind, DeviceKind::OPENCL);
        EXPECT_FALSE(f.platform.empty());
        EXPECT_FALSE(f.name.empty());
        EXPECT_GT(f.memory_bytes, 0u);
        EXPECT_GT(f.compute_units, 0u);
        EXPECT_EQ(f.version.rfind("OpenCL ", 0), 0u) << f.version;  // CL_DEVICE_VERSION's required prefix
    }
    // What the catalog says of a device is what the opened device says of itself.
    KernelRegistry kernels;
    const opencl::OpenClDevice opened(kernels, any_opencl_device(), 1 << 20);
    EXPECT_EQ(opened.facts().name, found[0].name);
    EXPECT_EQ(opened.facts().version, found[0].version);
    EXPECT_EQ(opened.facts().unified_host_memory, found[0].unified_host_memory);
    EXPECT_EQ(opened.facts().concurrent_kernels, 1u);  // one in-order queue
    EXPECT_EQ(found[0].concurrent_kernels, 1u);
    const std::string none = message_of([] { find_devices({DeviceKind::OPENCL, "no such platform", 0}); });
    EXPECT_NE(none.find("no platform's name contains 'no such platform' (found '" + found[0].platform),
              std::string::npos)
        << none;
}

TEST(OpenClDevice, MemoryLargerThanOneBufferMayBeIsRefusedNamingTheLimit) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    KernelRegistry kernels;
    const std::string why =
        message_of([&] { opencl::OpenClDevice device(kernels, any_opencl_device(), uint64_t{1} << 44); });
    EXPECT_NE(why.find("lets one buffer hold at most"), std::string::npos) << why;
}

// Staging through a device the chip process cannot reach: the staged range goes
// in whole, and only the written view's elements come back.
TEST(OpenClDevice, StagingCopiesInAndReturnsOnlyWrittenElements) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    KernelRegistry kernels;
    opencl::OpenClDevice device(kernels, any_opencl_device(), 1 << 20);
    std::vector<float> buf(64);
    for (int i = 0; i < 64; ++i) buf[i] = static_cast<float>(i);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(buf.data(), 256, 0, {8}, {1}));   // read
    args.add_tensor(view(buf.data(), 256, 16, {4}, {4}));  // written: 16, 20, 24, 28
    const TensorArgType tags[2] = {TensorArgType::INPUT, TensorArgType::OUTPUT_EXISTING};
    {
        StagedArgs staged = stage_in(args, tags, device, StagingMode::STAGE);
        const ChipTensor& d = staged.device_args().tensors[0];
        std::vector<float> seen(d.buffer.size / 4);
        device.wait(device.copy_to_host(seen.data(), d.buffer.addr, d.buffer.size));
        EXPECT_FLOAT_EQ(seen[d.start_offset + 7], 7.0f);
        // What a kernel writing over the whole staged range would leave there.
        const std::vector<float> scribble(seen.size(), -1.0f);
        device.wait(device.copy_to_device(d.buffer.addr, scribble.data(), d.buffer.size));
        staged.copy_back();
    }
    for (int i = 0; i < 64; ++i) {
        const bool written = i >= 16 && i < 32 && i % 4 == 0;
        ASSERT_FLOAT_EQ(buf[i], written ? -1.0f : static_cast<float>(i)) << i;
    }
    EXPECT_EQ(device.memory_stats().live_allocations, 0u);
}

#endif  // SIMPLER_HAVE_OPENCL
