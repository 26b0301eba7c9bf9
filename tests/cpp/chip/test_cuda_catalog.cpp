// A CUDA choice in the device catalog. With the CUDA headers (every ./dev
// build): find_devices lists the devices the driver reports, through the test
// driver library (tests/cpp/cuda_test_driver.cpp): their facts, a platform
// choosing by name or UUID prefix, every failure named (no driver library, a
// library that is no driver, an entry point missing at its ABI version, cuInit
// failing, no device); open_device refuses, as no chip runs on one yet; NVRTC
// is loaded from the file SIMPLER_NVRTC_LIBRARY or the registered candidate
// names, or said to be missing. Without the headers both refuse, saying what
// else this machine lacks. The kind's name and the service's validation;
// whether this process has loaded the driver already (loading nothing to ask).
//
// The catalog loads the driver once per process and file, so every question
// is asked in a throwaway child (probe_devices, as Worker.init asks), and one
// that changes what the test driver does as it loads asks of a fresh copy of
// it; NVRTC, loaded once per process, is asked in a gtest EXPECT_EXIT.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/chip/chip_service.h"
#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/device_catalog.h"
#include "simpler/engine/device_probe.h"

using namespace simpler::chip;

namespace {

// Sets an environment variable for one test (unset with nullptr) and puts
// back what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* was = std::getenv(name)) before_ = was, had_ = true;
        if (value != nullptr)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv() {
        if (had_)
            setenv(name_, before_.c_str(), 1);
        else
            unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::string before_;
    bool had_ = false;
};

// A copy of the test driver in a folder of its own, removed after: a file no
// process has loaded yet (the driver is loaded once per file and process).
class DriverCopy {
public:
    DriverCopy() {
        folder_ = (std::filesystem::temp_directory_path() / "simpler_cuda_XXXXXX").string();
        if (mkdtemp(folder_.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = folder_ + "/libcuda_test.so";
        std::filesystem::copy_file(SIMPLER_CUDA_TEST_DRIVER, path_);
    }
    ~DriverCopy() { std::filesystem::remove_all(folder_); }
    DriverCopy(const DriverCopy&) = delete;
    DriverCopy& operator=(const DriverCopy&) = delete;
    [[nodiscard]] const char* path() const noexcept { return path_.c_str(); }

private:
    std::string folder_;
    std::string path_;
};

struct CudaLibrary : ScopedEnv {
    explicit CudaLibrary(const char* path) : ScopedEnv("SIMPLER_CUDA_LIBRARY", path) {}
};

std::vector<DeviceFacts> probe(const std::string& platform = "") {
    return simpler::probe_devices({DeviceKind::CUDA, platform, 0});
}

std::string refusal_of_probe(const std::string& platform = "") {
    try {
        (void)probe(platform);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no refusal)";
}

std::string refusal_of_open() {
    KernelRegistry registry;
    try {
        (void)open_device({DeviceKind::CUDA, "", 0}, registry, SimulatedDeviceOptions{});
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no refusal)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(CudaCatalog, TheKindIsNamedAndAServiceConfigTakesIt) {
    EXPECT_STREQ(device_kind_name(DeviceKind::CUDA), "cuda");
    EXPECT_EQ(cuda_built(), SIMPLER_HAVE_CUDA != 0);
    ChipServiceConfig c;
    c.device.kind = DeviceKind::CUDA;
    EXPECT_NO_THROW(c.validate());  // the chip child's open_device says what is missing
    c.device.kind = static_cast<DeviceKind>(3);
    EXPECT_THROW(c.validate(), std::invalid_argument);
}

TEST(CudaCatalog, NoDriverLibraryIsNamedWithWhereItWasLookedFor) {
    const CudaLibrary lib("/nonexistent/libcuda.so.1");
    const std::string why = refusal_of_probe();
    EXPECT_TRUE(has(why, "no CUDA driver: cannot load /nonexistent/libcuda.so.1")) << why;
    EXPECT_TRUE(has(why, "at that path, as SIMPLER_CUDA_LIBRARY asked")) << why;
    EXPECT_TRUE(has(why, "comes with the NVIDIA driver")) << why;
}

TEST(CudaCatalog, ALibraryThatIsNoCudaDriverIsSaidToBeOne) {
    const CudaLibrary lib("libm.so.6");
    const std::string why = refusal_of_probe();
    EXPECT_TRUE(has(why, "no CUDA driver: libm.so.6 (as SIMPLER_CUDA_LIBRARY asked) has no cuGetProcAddress_v2"))
        << why;
}

TEST(CudaCatalog, WhetherTheDriverIsLoadedIsAskedWithoutLoadingIt) {
    {
        const CudaLibrary lib("/nonexistent/libcuda.so.1");
        EXPECT_FALSE(cuda_driver_loaded());
    }
    {
        const CudaLibrary lib("libm.so.6");  // every C++ program here has it
        EXPECT_TRUE(cuda_driver_loaded());
    }
    const DriverCopy driver;  // a file no process has loaded
    const CudaLibrary lib(driver.path());
    EXPECT_FALSE(cuda_driver_loaded());
    EXPECT_FALSE(cuda_driver_loaded());  // asking loaded nothing
    void* handle = dlopen(driver.path(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    EXPECT_TRUE(cuda_driver_loaded());
    dlclose(handle);
#ifndef __SANITIZE_ADDRESS__  // ASan keeps a closed library mapped
    EXPECT_FALSE(cuda_driver_loaded());
#endif
    EXPECT_EQ(cuda_driver_problem(), "");
}

#if SIMPLER_HAVE_CUDA

TEST(CudaCatalog, TheDriversDevicesAreFoundWithTheirFacts) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    const std::vector<DeviceFacts> found = probe();
    ASSERT_EQ(found.size(), 2u);
    const DeviceFacts& d = found[0];
    EXPECT_EQ(d.kind, DeviceKind::CUDA);
    EXPECT_EQ(d.platform, "NVIDIA CUDA");
    EXPECT_EQ(d.name, "simpler test GPU 0");
    EXPECT_EQ(d.uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
    EXPECT_EQ(d.version, "CUDA 13.0 driver, compute capability 9.0");
    EXPECT_EQ(d.memory_bytes, uint64_t{1} << 30);
    EXPECT_EQ(d.compute_units, 132u);
    EXPECT_EQ(d.concurrent_kernels, 1u);
    EXPECT_FALSE(d.unified_host_memory);
    EXPECT_EQ(found[1].name, "simpler test GPU 1");
    EXPECT_EQ(found[1].uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
    EXPECT_EQ(found[1].memory_bytes, uint64_t{2} << 30);
}

TEST(CudaCatalog, APlatformChoosesByANameOrTheBeginningOfAUuid) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    for (const char* platform : {"GPU 1", "gpu-1011", "GPU-10111213-14", "101112"}) {
        const std::vector<DeviceFacts> found = probe(platform);
        ASSERT_EQ(found.size(), 1u) << platform;
        EXPECT_EQ(found[0].name, "simpler test GPU 1") << platform;
    }
    EXPECT_EQ(probe("Simpler Test").size(), 2u);
    const std::string why = refusal_of_probe("A100");
    EXPECT_EQ(
        why,
        "CUDA: no device's name contains, nor its UUID begins with, 'A100' (found 'simpler test GPU 0' "
        "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f, 'simpler test GPU 1' GPU-10111213-1415-1617-1819-1a1b1c1d1e1f)");
}

TEST(CudaCatalog, ACuInitFailureIsNamedByTheDriver) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    const ScopedEnv fail("SIMPLER_TEST_CUDA_INIT_RESULT", "100");
    EXPECT_EQ(refusal_of_probe(), std::string("CUDA: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
                                              "detected) (driver ") +
                                      SIMPLER_CUDA_TEST_DRIVER + ", CUDA 13.0)");
    const ScopedEnv unknown("SIMPLER_TEST_CUDA_INIT_RESULT", "777");
    EXPECT_TRUE(has(refusal_of_probe(), "CUDA: cuInit failed: CUresult 777 (driver ")) << refusal_of_probe();
}

TEST(CudaCatalog, ADriverWithNoDeviceSaysSo) {
    const DriverCopy driver;  // the version is read as the driver loads
    const CudaLibrary lib(driver.path());
    const ScopedEnv none("SIMPLER_TEST_CUDA_DEVICES", "0");
    const ScopedEnv version("SIMPLER_TEST_CUDA_DRIVER_VERSION", "12080");
    EXPECT_EQ(refusal_of_probe(), std::string("CUDA: the driver ") + driver.path() +
                                      " (CUDA 12.8) reports no device (CUDA_VISIBLE_DEVICES may hide them)");
}

TEST(CudaCatalog, AnEntryPointTheDriverLacksIsNamedWithItsAbiVersion) {
    const DriverCopy driver;  // the entry points are bound as the driver loads
    const CudaLibrary lib(driver.path());
    const ScopedEnv hide("SIMPLER_TEST_CUDA_HIDE", "cuDeviceGetUuid");
    EXPECT_EQ(refusal_of_probe(), std::string("CUDA: the driver ") + driver.path() +
                                      " has no cuDeviceGetUuid at ABI version 11040 (no such entry point: a driver "
                                      "older than CUDA 11.4?)");
}

TEST(CudaCatalog, NoChipRunsOnACudaDeviceYet) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    const std::string why = refusal_of_open();
    EXPECT_TRUE(has(why,
                    "CUDA: this version of simpler finds CUDA devices (python -m simpler devices lists them) but "
                    "runs no chip on one yet"))
        << why;
}

#ifdef SIMPLER_TEST_NVRTC_LIBRARY
// In a forked child: NVRTC is loaded once per process.
TEST(CudaCatalog, NvrtcIsLoadedFromTheFileNamedOrTheCandidate) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const auto version_of = [](const char* variable, const char* candidate) {
        if (variable != nullptr)
            setenv("SIMPLER_NVRTC_LIBRARY", variable, 1);
        else
            unsetenv("SIMPLER_NVRTC_LIBRARY");
        if (candidate != nullptr) set_nvrtc_candidate(candidate);
        try {
            const auto [major, minor] = nvrtc_version();
            std::fprintf(stderr, "NVRTC %d.%d\n", major, minor);
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "%s\n", e.what());
        }
        std::exit(0);
    };
    EXPECT_EXIT(version_of(SIMPLER_TEST_NVRTC_LIBRARY, nullptr), testing::ExitedWithCode(0), "NVRTC 13\\.[0-9]+");
    EXPECT_EXIT(version_of(nullptr, SIMPLER_TEST_NVRTC_LIBRARY), testing::ExitedWithCode(0), "NVRTC 13\\.[0-9]+");
    // The variable wins over the candidate.
    EXPECT_EXIT(version_of("/nonexistent/libnvrtc.so.13", SIMPLER_TEST_NVRTC_LIBRARY), testing::ExitedWithCode(0),
                "no NVRTC \\(CUDA's run-time compiler, which builds the kernels of CUDA chips\\): cannot load "
                "/nonexistent/libnvrtc.so.13 .*at that path, as SIMPLER_NVRTC_LIBRARY asked.*pip install "
                "nvidia-cuda-nvrtc");
    EXPECT_EXIT(version_of("libm.so.6", nullptr), testing::ExitedWithCode(0),
                "no NVRTC: libm.so.6 has no nvrtcVersion \\(it is not CUDA's NVRTC\\)");
}
#endif

#else

TEST(CudaCatalog, WithoutTheHeadersTheBuildIsSaidToBeMissing) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    EXPECT_EQ(cuda_driver_problem(), "");
    const std::string why = refusal_of_probe();
    EXPECT_EQ(why.find("CUDA: this build of simpler drives no CUDA devices"), 0u) << why;
    EXPECT_TRUE(has(why, "on this machine: the CUDA driver is there")) << why;
    EXPECT_EQ(refusal_of_open(), why);  // the same answer as find_devices
}

#endif
