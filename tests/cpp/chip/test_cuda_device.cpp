// The CUDA device's own bookkeeping, through the test driver library
// (tests/cpp/cuda_test_driver.cpp): the device a choice opens and its facts;
// everything it made (the context retain, its memory, the stream, the events)
// released when it goes; a failed call named by the driver's name for its
// CUresult, with the call and the device; a sticky error (an illegal address)
// losing the device, so every later call says so and what lost it, while a
// non-sticky one leaves it usable; memory it cannot get named at opening; a
// launch failing its task (no kernels yet). The contract every device keeps is
// test_device_contract.cpp. Not on a GPU: these failures are the test
// driver's to make.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_fixture.h"
#include "simpler/chip/kernel_api.h"

#if SIMPLER_HAVE_CUDA
#include "simpler/chip/cuda/cuda_device.h"

using namespace simpler::chip;

namespace {

// Sets SIMPLER_TEST_CUDA_FAIL for one scope.
class Failing {
public:
    explicit Failing(const char* what) { setenv("SIMPLER_TEST_CUDA_FAIL", what, 1); }
    ~Failing() { unsetenv("SIMPLER_TEST_CUDA_FAIL"); }
    Failing(const Failing&) = delete;
    Failing& operator=(const Failing&) = delete;
};

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(nothing was thrown)";
}

// What the test driver has alive (allocations, streams, events, context retains).
int driver_live() {
    void* handle = dlopen(SIMPLER_CUDA_TEST_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return -1;
    auto live = reinterpret_cast<int (*)()>(dlsym(handle, "simpler_test_cuda_live"));
    const int n = live != nullptr ? live() : -1;
    dlclose(handle);
    return n;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CudaDeviceTest : public testing::Test {
protected:
    void SetUp() override {
        if (cuda_required()) GTEST_SKIP() << "the test driver's failures; SIMPLER_REQUIRE_CUDA=1 drives a GPU";
        use_cuda_test_driver_unless_required();
        (void)cuda::cuda_api();  // loaded before a test counts what the driver has alive
    }
    KernelRegistry kernels_;
};

}  // namespace

TEST_F(CudaDeviceTest, OpensTheChosenDeviceAndReleasesAllItMade) {
    const int before = driver_live();
    {
        cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 3}, 1 << 20);  // 3 modulo 2 devices
        EXPECT_EQ(d.facts().name, "simpler test GPU 1");
        EXPECT_EQ(d.facts().uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
        EXPECT_EQ(d.facts().memory_bytes, uint64_t{2} << 30);
        EXPECT_EQ(d.host_address(d.alloc(64)), nullptr);
        EXPECT_GE(driver_live(), 0);
        EXPECT_GT(driver_live(), before);  // the retain, the memory, the stream
        std::vector<char> buf(256, 'x');
        const uint64_t a = d.alloc(256);
        d.copy_to_device(a, buf.data(), buf.size());  // an event never waited for
        d.wait(d.copy_to_host(buf.data(), a, buf.size()));
        void* reserved = std::malloc(4096);
        d.adopt_range(reinterpret_cast<uint64_t>(reserved), 4096);
        std::free(reserved);  // never touched: the device holds the bytes in a region of its own
    }
    EXPECT_EQ(driver_live(), before);
}

TEST_F(CudaDeviceTest, AFailedCallIsNamedByTheDriverAndANonStickyOneLeavesTheDeviceUsable) {
    cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20);
    const uint64_t a = d.alloc(64);
    std::vector<char> buf(64, 'a');
    {
        const Failing fail("cuMemcpyHtoDAsync=1");
        const std::string why = message_of([&] { d.copy_to_device(a, buf.data(), 64); });
        EXPECT_EQ(why,
                  "CUDA device 'simpler test GPU 0': cuMemcpyHtoDAsync of 64 bytes failed: CUDA_ERROR_INVALID_VALUE "
                  "(invalid argument)");
    }
    EXPECT_EQ(d.lost(), "");
    d.wait(d.copy_to_device(a, buf.data(), 64));
}

TEST_F(CudaDeviceTest, AStickyErrorLosesTheDevice) {
    cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20);
    const uint64_t a = d.alloc(64);
    std::vector<char> buf(64, 'a');
    {
        const Failing fail("cuMemcpyDtoHAsync=700");
        const std::string why = message_of([&] { d.copy_to_host(buf.data(), a, 64); });
        EXPECT_EQ(why,
                  "CUDA device 'simpler test GPU 0': cuMemcpyDtoHAsync of 64 bytes failed: CUDA_ERROR_ILLEGAL_ADDRESS "
                  "(an illegal memory access was encountered); the error leaves its context unusable: the device is "
                  "lost");
    }
    EXPECT_EQ(d.lost(),
              "cuMemcpyDtoHAsync of 64 bytes failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
              "encountered)");
    for (const std::function<void()>& call :
         std::vector<std::function<void()>>{[&] { d.copy_to_device(a, buf.data(), 64); }, [&] { d.synchronize(); }})
        EXPECT_EQ(message_of(call), "CUDA device 'simpler test GPU 0' is lost: " + d.lost());
}

TEST_F(CudaDeviceTest, MemoryItCannotGetIsNamedAtOpening) {
    const int before = driver_live();
    const Failing fail("cuMemAlloc=2");
    const std::string why = message_of([&] { cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20); });
    EXPECT_EQ(why,
              "CUDA device 'simpler test GPU 0': cuMemAlloc of its device memory (lower the chip's arena_bytes) "
              "(1048576 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    EXPECT_EQ(driver_live(), before);  // the stream and the retain given back
}

TEST_F(CudaDeviceTest, ALaunchFailsItsTaskNamingTheKernel) {
    cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20);
    KernelArgs args{};
    char error[256] = {};
    args.error = error;
    args.error_capacity = sizeof error;
    EXPECT_NE(d.launch(12345, args), CHIP_OK);
    EXPECT_TRUE(has(error, "CUDA device 'simpler test GPU 0' launches no kernel yet")) << error;
}

#endif
