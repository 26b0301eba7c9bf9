// The CUDA device's own bookkeeping, through the test driver library
// (tests/cpp/cuda_test_driver.cpp): the device a choice opens and its facts;
// everything it made (the context retain, its memory, the stream, the events)
// released when it goes; a failed call named by the driver's name for its
// CUresult, with the call and the device; a sticky error (an illegal address)
// losing the device, so every later call says so and what lost it, while a
// non-sticky one leaves it usable; memory it cannot get named at opening; a
// kernel with no CUDA form failing its task; the standard kernels compiled by
// NVRTC and launched with their arguments laid out as the OpenCL C takes them
// (the test driver runs two of them on the CPU). The contract every device keeps is
// test_device_contract.cpp. Not on a GPU: these failures are the test
// driver's to make.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "cuda_fixture.h"
#include "simpler/chip/kernel_api.h"

#if SIMPLER_HAVE_CUDA
#include "simpler/chip/cuda/cuda_device.h"
#include "simpler/chip/cuda_driver.h"

using namespace simpler::chip;
using chip_test::message_of;

namespace {

// Sets SIMPLER_TEST_CUDA_FAIL for one scope.
class Failing {
public:
    explicit Failing(const char* what) { setenv("SIMPLER_TEST_CUDA_FAIL", what, 1); }
    ~Failing() { unsetenv("SIMPLER_TEST_CUDA_FAIL"); }
    Failing(const Failing&) = delete;
    Failing& operator=(const Failing&) = delete;
};

// What the test driver has alive (allocations, streams, events, context retains).
int driver_live() {
    void* handle = dlopen(SIMPLER_CUDA_TEST_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return -1;
    auto live = reinterpret_cast<int (*)()>(dlsym(handle, "simpler_test_cuda_live"));
    const int n = live != nullptr ? live() : -1;
    dlclose(handle);
    return n;
}

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

TEST_F(CudaDeviceTest, AKernelWithNoCudaFormFailsItsTaskNamingIt) {
    const uint32_t id = kernels_.add_kernel("user.scale", [](const KernelArgs*) { return int32_t{CHIP_OK}; });
    cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20);
    KernelArgs args{};
    char error[256] = {};
    args.error = error;
    args.error_capacity = sizeof error;
    EXPECT_NE(d.launch(id, args), CHIP_OK);
    EXPECT_STREQ(error, "kernel 'user.scale' has no CUDA form on CUDA device 'simpler test GPU 0'");
}

#ifdef SIMPLER_TEST_NVRTC_LIBRARY
namespace {

// A working tensor over device memory [addr, addr + size): 1-D or 2-D, any strides.
Tensor on_device(uint64_t addr, uint64_t size, uint64_t start, std::vector<uint32_t> shapes,
                 std::vector<uint32_t> strides, DataType dtype = DataType::FLOAT32) {
    Tensor t{};
    t.addr = addr;
    t.size = size;
    t.start_offset = start;
    t.ndims = static_cast<uint32_t>(shapes.size());
    for (size_t d = 0; d < shapes.size(); ++d) {
        t.shapes[d] = shapes[d];
        t.strides[d] = strides[d];
    }
    t.dtype = static_cast<uint8_t>(dtype);
    return t;
}

}  // namespace

// The standard set compiled by NVRTC (the test driver takes the CUBIN and runs
// two of its kernels on the CPU from the arguments as laid out): offsets into
// regions, strided views and a grid of several blocks reach the kernel whole.
TEST_F(CudaDeviceTest, StandardKernelsRunWithTheirArgumentsLaidOutAsTheOpenClCKernelsTakeThem) {
    set_nvrtc_candidate(SIMPLER_TEST_NVRTC_LIBRARY);
    std::string cache = (std::filesystem::temp_directory_path() / "simpler_cuda_cache_XXXXXX").string();
    ASSERT_NE(mkdtemp(cache.data()), nullptr);
    setenv("SIMPLER_CACHE_DIR", cache.c_str(), 1);
    register_standard_library(kernels_);
    uint32_t add = 0, copy = 0, matmul = 0;
    ASSERT_TRUE(kernels_.find_kernel("std.vector_add", &add));
    ASSERT_TRUE(kernels_.find_kernel("std.copy", &copy));
    ASSERT_TRUE(kernels_.find_kernel("std.matmul", &matmul));
    {
        cuda::CudaDevice d(kernels_, {DeviceKind::CUDA, "", 0}, 1 << 20);
        d.prepare(add);  // compiles and loads the standard module
        constexpr uint32_t N = 1000;  // four blocks of 256
        std::vector<float> x(N + 8), y(N), z(2 * N, -1.0f);
        for (uint32_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
        for (uint32_t i = 0; i < N; ++i) y[i] = 0.5f * static_cast<float>(i);
        const uint64_t ax = d.alloc(x.size() * 4), ay = d.alloc(N * 4), az = d.alloc(2 * N * 4);
        d.copy_to_device(ax, x.data(), x.size() * 4);
        d.copy_to_device(ay, y.data(), N * 4);
        d.copy_to_device(az, z.data(), 2 * N * 4);
        const Tensor t[3] = {on_device(ax, x.size() * 4, 8, {N}, {1}), on_device(ay, N * 4, 0, {N}, {1}),
                             on_device(az, 2 * N * 4, 0, {N}, {2})};
        char error[512] = {};
        KernelArgs args{t, nullptr, 3, 0, 0, sizeof error, error};
        ASSERT_EQ(d.launch(add, args), CHIP_OK) << error;
        d.wait(d.copy_to_host(z.data(), az, 2 * N * 4));
        for (uint32_t i = 0; i < N; ++i) {
            ASSERT_EQ(z[2 * i], x[i + 8] + y[i]) << i;
            ASSERT_EQ(z[2 * i + 1], -1.0f) << i;  // the view's gaps untouched
        }
        // std.copy of a 2-D view (a 25 x 40 block of z's even elements) into y's region, transposed.
        const Tensor c[2] = {on_device(az, 2 * N * 4, 0, {25, 40}, {80, 2}),
                             on_device(ay, N * 4, 0, {25, 40}, {1, 25})};
        KernelArgs copy_args{c, nullptr, 2, 0, 0, sizeof error, error};
        ASSERT_EQ(d.launch(copy, copy_args), CHIP_OK) << error;
        std::vector<float> back(N);
        d.wait(d.copy_to_host(back.data(), ay, N * 4));
        for (uint32_t r = 0; r < 25; ++r)
            for (uint32_t k = 0; k < 40; ++k) ASSERT_EQ(back[r + 25 * k], z[80 * r + 2 * k]) << r << "," << k;
        // A kernel the test driver does not run: the CUresult comes back in the task's error.
        const Tensor m[3] = {on_device(ax, 16, 0, {2, 2}, {2, 1}), on_device(ay, 16, 0, {2, 2}, {2, 1}),
                             on_device(az, 16, 0, {2, 2}, {2, 1})};
        KernelArgs mm{m, nullptr, 3, 0, 0, sizeof error, error};
        EXPECT_NE(d.launch(matmul, mm), CHIP_OK);
        EXPECT_STREQ(error,
                     "on CUDA device 'simpler test GPU 0': CUDA device 'simpler test GPU 0': cuLaunchKernel of kernel "
                     "'std_matmul_f32' failed: CUDA_ERROR_NOT_SUPPORTED (operation not supported)");
        EXPECT_EQ(d.lost(), "");
    }
    unsetenv("SIMPLER_CACHE_DIR");
    std::filesystem::remove_all(cache);
}
#endif

#endif
