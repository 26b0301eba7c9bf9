// The OpenCL device on the machine's OpenCL implementation (PoCL's CPU device
// under ./dev): finding it, its memory (addresses nothing in the process may
// dereference, resolved to its cl_mem), copies in and out with events, an
// adopted range, staging through it (only written elements come back), and
// the refusals: a range outside its memory, memory larger than one buffer
// may be, a platform that does not exist.
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
#include <sys/mman.h>

#include "simpler/chip/opencl/opencl_device.h"

using namespace simpler::chip;
using chip_test::view;

namespace {

DeviceChoice any_opencl_device() { return {DeviceKind::OPENCL, "", 0}; }

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(nothing was thrown)";
}

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

TEST(OpenClDevice, CopiesRoundTripThroughItsMemoryWithEvents) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    KernelRegistry kernels;
    opencl::OpenClDevice device(kernels, any_opencl_device(), 1 << 20);
    EXPECT_EQ(device.facts().kind, DeviceKind::OPENCL);
    const uint64_t a = device.alloc(4096), b = device.alloc(4096);
    EXPECT_EQ(device.host_address(a), nullptr);
    EXPECT_TRUE(device.contains(a, 4096));
    EXPECT_EQ(device.memory_stats().live_allocations, 2u);
    std::vector<uint32_t> in(1024), out(1024, 0), other(1024, 0);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 2654435761u;
    const DeviceEvent w = device.copy_to_device(a, in.data(), 4096);
    device.copy_to_device(b, other.data(), 4096);
    device.wait(w);
    device.wait(device.copy_to_host(out.data(), a, 4096));
    EXPECT_EQ(in, out);
    // A part of a block, at an offset, and synchronize() for everything issued.
    std::vector<uint32_t> part(16, 7);
    device.copy_to_device(a + 64, part.data(), 64);
    device.copy_to_host(out.data(), a, 4096);
    device.synchronize();
    for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(out[i], i >= 16 && i < 32 ? 7u : in[i]) << i;
    EXPECT_TRUE(device.try_free(a));
    EXPECT_FALSE(device.try_free(a));
}

TEST(OpenClDevice, ARangeOutsideItsMemoryIsRefusedNamingIt) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    KernelRegistry kernels;
    opencl::OpenClDevice device(kernels, any_opencl_device(), 1 << 20);
    const uint64_t a = device.alloc(64);
    std::vector<char> buf(128);
    const std::string past = message_of([&] { device.copy_to_host(buf.data(), a + (1 << 20), 16); });
    EXPECT_NE(past.find("is not inside the memory of '" + device.facts().name + "'"), std::string::npos) << past;
    EXPECT_THROW(device.copy_to_device(reinterpret_cast<uint64_t>(buf.data()), buf.data(), 16), std::invalid_argument);
}

TEST(OpenClDevice, AnAdoptedRangeHoldsItsBytesOnTheDevice) {
    SIMPLER_REQUIRE_OPENCL_DEVICE();
    KernelRegistry kernels;
    opencl::OpenClDevice device(kernels, any_opencl_device(), 1 << 20);
    // The range a Worker's heap would reserve: addresses only, never touched here.
    void* reserved = mmap(nullptr, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(reserved, MAP_FAILED);
    const auto base = reinterpret_cast<uint64_t>(reserved);
    device.adopt_range(base, 1 << 16);
    EXPECT_TRUE(device.contains(base + 100, 16));
    const char msg[] = "on the device";
    char back[sizeof msg] = {};
    device.copy_to_device(base + 4096, msg, sizeof msg);
    device.wait(device.copy_to_host(back, base + 4096, sizeof msg));
    EXPECT_STREQ(back, msg);
    EXPECT_THROW(device.adopt_range(base + 64, 64), std::invalid_argument);
    munmap(reserved, 1 << 16);
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
