// A CUDA choice in the device catalog: this build drives no CUDA device, and
// find_devices and open_device say so together with what else this machine
// lacks — no driver library where SIMPLER_CUDA_LIBRARY (or the dynamic linker)
// points, a library that is not a CUDA driver, or "the CUDA driver is there"
// with the test driver library. The kind's name and the service's validation;
// whether this process has loaded the driver already (loading nothing to ask).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "simpler/chip/chip_service.h"
#include "simpler/chip/cuda_driver.h"
#include "simpler/chip/device_catalog.h"

using namespace simpler::chip;

namespace {

// Sets SIMPLER_CUDA_LIBRARY for one test and puts back what was there.
class CudaLibrary {
public:
    explicit CudaLibrary(const char* path) {
        if (const char* was = std::getenv("SIMPLER_CUDA_LIBRARY")) before_ = was, had_ = true;
        setenv("SIMPLER_CUDA_LIBRARY", path, 1);
    }
    ~CudaLibrary() {
        if (had_)
            setenv("SIMPLER_CUDA_LIBRARY", before_.c_str(), 1);
        else
            unsetenv("SIMPLER_CUDA_LIBRARY");
    }
    CudaLibrary(const CudaLibrary&) = delete;
    CudaLibrary& operator=(const CudaLibrary&) = delete;

private:
    std::string before_;
    bool had_ = false;
};

std::string refusal_of_find() {
    try {
        (void)find_devices({DeviceKind::CUDA, "", 0});
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no refusal)";
}

}  // namespace

TEST(CudaCatalog, TheKindIsNamedAndAServiceConfigTakesIt) {
    EXPECT_STREQ(device_kind_name(DeviceKind::CUDA), "cuda");
    EXPECT_FALSE(cuda_built());
    ChipServiceConfig c;
    c.device.kind = DeviceKind::CUDA;
    EXPECT_NO_THROW(c.validate());  // the chip child's open_device says what is missing
    c.device.kind = static_cast<DeviceKind>(3);
    EXPECT_THROW(c.validate(), std::invalid_argument);
}

TEST(CudaCatalog, NoDriverLibraryIsNamedWithWhereItWasLookedFor) {
    const CudaLibrary lib("/nonexistent/libcuda.so.1");
    const std::string why = refusal_of_find();
    EXPECT_EQ(why.find("CUDA: this build of simpler drives no CUDA devices"), 0u) << why;
    EXPECT_NE(why.find("no CUDA driver: cannot load /nonexistent/libcuda.so.1"), std::string::npos) << why;
    EXPECT_NE(why.find("at that path, as SIMPLER_CUDA_LIBRARY asked"), std::string::npos) << why;
    EXPECT_NE(why.find("comes with the NVIDIA driver"), std::string::npos) << why;
    KernelRegistry registry;
    try {
        (void)open_device({DeviceKind::CUDA, "", 0}, registry, SimulatedDeviceOptions{});
        ADD_FAILURE() << "open_device took a CUDA choice";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), why);  // the same answer as find_devices
    }
}

TEST(CudaCatalog, ALibraryThatIsNoCudaDriverIsSaidToBeOne) {
    const CudaLibrary lib("libm.so.6");
    const std::string why = refusal_of_find();
    EXPECT_NE(why.find("no CUDA driver: libm.so.6 (as SIMPLER_CUDA_LIBRARY asked) has no cuGetProcAddress_v2"),
              std::string::npos)
        << why;
}

TEST(CudaCatalog, WithADriverLibraryOnlyTheBuildIsMissing) {
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    EXPECT_EQ(cuda_driver_problem(), "");
    const std::string why = refusal_of_find();
    EXPECT_EQ(why.find("CUDA: this build of simpler drives no CUDA devices"), 0u) << why;
    EXPECT_NE(why.find("on this machine: the CUDA driver is there"), std::string::npos) << why;
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
    const CudaLibrary lib(SIMPLER_CUDA_TEST_DRIVER);
    EXPECT_EQ(cuda_driver_problem(), "");  // opened and closed again
    EXPECT_FALSE(cuda_driver_loaded());
    void* handle = dlopen(SIMPLER_CUDA_TEST_DRIVER, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    EXPECT_TRUE(cuda_driver_loaded());
    dlclose(handle);
    EXPECT_FALSE(cuda_driver_loaded());
}
