// The device contract (device.h), one test over every device: the simulated
// one, OpenCL (PoCL's CPU device under ./dev) and CUDA (the test driver
// library here, tests/cpp/cuda_test_driver.cpp; the real driver where
// SIMPLER_REQUIRE_CUDA=1). Blocks are device memory until freed; copies round
// trip in issue order with events, at offsets inside a block; a range outside
// its memory is refused naming the device; an adopted range holds its bytes
// and another overlapping it is refused; several threads copy at once (as
// a chip's core threads do). What is particular to one device is tested
// beside it (test_simulated_device.cpp, test_opencl_device.cpp,
// test_cuda_device.cpp).
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chip_fixtures.h"
#include "cuda_fixture.h"
#include "opencl_fixture.h"
#include "simpler/chip/device_catalog.h"
#include "simpler/chip/simulated_device.h"

#if SIMPLER_HAVE_OPENCL
#include "simpler/chip/opencl/opencl_device.h"
#endif
#if SIMPLER_HAVE_CUDA
#include "simpler/chip/cuda/cuda_device.h"
#endif

using namespace simpler::chip;
using chip_test::message_of;

namespace {

constexpr uint64_t MEMORY = 1 << 20;

class DeviceContract : public testing::TestWithParam<DeviceKind> {
protected:
    void SetUp() override {
        switch (GetParam()) {
            case DeviceKind::SIMULATED: {
                SimulatedDeviceOptions o;
                o.memory_bytes = MEMORY;
                device_ = std::make_unique<SimulatedDevice>(kernels_, o);
                return;
            }
            case DeviceKind::OPENCL:
#if SIMPLER_HAVE_OPENCL
                SIMPLER_REQUIRE_OPENCL_DEVICE();
                device_ =
                    std::make_unique<opencl::OpenClDevice>(kernels_, DeviceChoice{DeviceKind::OPENCL, "", 0}, MEMORY);
#endif
                return;
            case DeviceKind::CUDA:
#if SIMPLER_HAVE_CUDA
                use_cuda_test_driver_unless_required();
                device_ = std::make_unique<cuda::CudaDevice>(kernels_, DeviceChoice{DeviceKind::CUDA, "", 0}, MEMORY);
#endif
                return;
        }
    }

    Device& device() { return *device_; }

    KernelRegistry kernels_;
    std::unique_ptr<Device> device_;
};

std::vector<DeviceKind> devices_here() {
    std::vector<DeviceKind> kinds{DeviceKind::SIMULATED};
#if SIMPLER_HAVE_OPENCL
    if (opencl_tests_run()) kinds.push_back(DeviceKind::OPENCL);
#endif
#if SIMPLER_HAVE_CUDA
    kinds.push_back(DeviceKind::CUDA);
#endif
    return kinds;
}

}  // namespace

TEST_P(DeviceContract, BlocksAreDeviceMemoryUntilFreed) {
    Device& d = device();
    EXPECT_EQ(d.facts().kind, GetParam());
    EXPECT_FALSE(d.facts().name.empty());
    const uint64_t a = d.alloc(1000), b = d.alloc(4096, 4096);
    EXPECT_EQ(b % 4096, 0u);
    EXPECT_TRUE(d.contains(a, 1000));
    EXPECT_TRUE(d.contains(b, 4096));
    EXPECT_FALSE(d.contains(a, 2 * MEMORY));
    EXPECT_EQ(d.memory_stats().live_allocations, 2u);
    EXPECT_EQ(d.try_alloc(2 * MEMORY), 0u);
    EXPECT_THROW(d.alloc(2 * MEMORY), std::runtime_error);
    EXPECT_TRUE(d.try_free(a));
    EXPECT_FALSE(d.try_free(a));
    EXPECT_FALSE(d.try_free(b + 64));  // inside a block, not its start
    EXPECT_EQ(d.memory_stats().live_allocations, 1u);
}

TEST_P(DeviceContract, CopiesRoundTripInIssueOrderWithEvents) {
    Device& d = device();
    const uint64_t a = d.alloc(4096), b = d.alloc(4096);
    std::vector<uint32_t> in(1024), out(1024, 0), other(1024, 5);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 2654435761u;
    const DeviceEvent w = d.copy_to_device(a, in.data(), 4096);
    d.copy_to_device(b, other.data(), 4096);
    d.wait(w);
    d.wait(w);  // a second wait on one event returns
    d.wait(0);  // as does a wait on the event of nothing
    d.wait(d.copy_to_host(out.data(), a, 4096));
    EXPECT_EQ(in, out);
    // A part of a block at an offset, then a read of the whole: issue order, and
    // synchronize() for everything issued.
    std::vector<uint32_t> part(16, 7);
    d.copy_to_device(a + 64, part.data(), 64);
    d.copy_to_host(out.data(), a, 4096);
    d.synchronize();
    for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(out[i], i >= 16 && i < 32 ? 7u : in[i]) << i;
    d.wait(d.copy_to_host(out.data(), b, 4096));
    EXPECT_EQ(out, other);
    EXPECT_EQ(d.copy_to_device(a, in.data(), 0), 0u);  // nothing to copy
}

TEST_P(DeviceContract, ARangeOutsideItsMemoryIsRefusedNamingTheDevice) {
    Device& d = device();
    const uint64_t a = d.alloc(64);
    std::vector<char> buf(128);
    const std::string past = message_of([&] { d.copy_to_host(buf.data(), a + 2 * MEMORY, 16); });
    EXPECT_NE(past.find("copy_to_host: device range"), std::string::npos) << past;
    EXPECT_NE(past.find(d.facts().name), std::string::npos) << past;
    EXPECT_THROW(d.copy_to_device(reinterpret_cast<uint64_t>(buf.data()), buf.data(), 16), std::invalid_argument);
}

TEST_P(DeviceContract, AnAdoptedRangeHoldsItsBytes) {
    Device& d = device();
    // The range a Worker's heap reserves for the chip (the simulated device keeps its bytes there).
    void* reserved = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(reserved, MAP_FAILED);
    const auto base = reinterpret_cast<uint64_t>(reserved);
    d.adopt_range(base, 1 << 16);
    EXPECT_TRUE(d.contains(base + 100, 16));
    EXPECT_FALSE(d.contains(base + (1 << 16) - 8, 16));
    const char msg[] = "on the device";
    char back[sizeof msg] = {};
    d.copy_to_device(base + 4096, msg, sizeof msg);
    d.wait(d.copy_to_host(back, base + 4096, sizeof msg));
    EXPECT_STREQ(back, msg);
    EXPECT_THROW(d.adopt_range(base + 64, 64), std::invalid_argument);
    EXPECT_THROW(d.adopt_range(base + (1 << 16), 0), std::invalid_argument);
    device_.reset();
    munmap(reserved, 1 << 16);
}

TEST_P(DeviceContract, SeveralThreadsCopyAtOnce) {
    Device& d = device();
    constexpr int THREADS = 4;
    std::vector<std::thread> threads;
    std::vector<int> good(THREADS, 0);
    for (int t = 0; t < THREADS; ++t)
        threads.emplace_back([&d, &good, t] {
            const uint64_t a = d.alloc(8192);
            std::vector<uint8_t> in(8192), out(8192);
            for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 31 + t);
            for (int round = 0; round < 20; ++round) {
                d.copy_to_device(a, in.data(), in.size());
                d.wait(d.copy_to_host(out.data(), a, out.size()));
                good[t] += static_cast<int>(in == out);
            }
            d.try_free(a);
        });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < THREADS; ++t) EXPECT_EQ(good[t], 20) << "thread " << t;
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, DeviceContract, testing::ValuesIn(devices_here()),
                         [](const testing::TestParamInfo<DeviceKind>& kind) {
                             return std::string(device_kind_name(kind.param));
                         });
