// NVRTC on the CPU (no GPU needed): the whole standard set (its OpenCL C, in
// the CUDA dialect) and a user's .cu compile to CUBIN for sm_90, the H100 and
// H200's architecture; a second compile of the same is read from the chip
// cache; a source that does not compile is refused with NVRTC's log, naming
// the source and the architecture. Needs the nvidia-cuda-nvrtc wheel ./dev
// installs (SIMPLER_TEST_NVRTC_LIBRARY).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#if SIMPLER_HAVE_CUDA && defined(SIMPLER_TEST_NVRTC_LIBRARY)
#include "simpler/chip/cuda/cuda_compiler.h"
#include "simpler/chip/cuda_driver.h"
#if SIMPLER_HAVE_OPENCL
#include "simpler/chip/clc/clc_std_kernels.h"
#endif

using namespace simpler::chip;

namespace {

// A chip cache of this test's own, and the wheel's NVRTC.
class CudaCompiler : public testing::Test {
protected:
    void SetUp() override {
        set_nvrtc_candidate(SIMPLER_TEST_NVRTC_LIBRARY);
        cache_ = (std::filesystem::temp_directory_path() / "simpler_nvrtc_XXXXXX").string();
        ASSERT_NE(mkdtemp(cache_.data()), nullptr);
        setenv("SIMPLER_CACHE_DIR", cache_.c_str(), 1);
    }
    void TearDown() override {
        unsetenv("SIMPLER_CACHE_DIR");
        std::filesystem::remove_all(cache_);
    }
    std::string cache_;
};

bool is_elf(const std::string& bytes) {
    return bytes.size() > 4 && bytes.compare(0, 4,
                                             "\x7f"
                                             "ELF") == 0;
}

std::string read(const char* path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

#if SIMPLER_HAVE_OPENCL
TEST_F(CudaCompiler, TheStandardSetCompilesToCubinForSm90AndIsCached) {
    const cuda::Cubin first = cuda::compile_cubin(clc::std_kernels_source(), "the standard kernels", 9, 0);
    EXPECT_TRUE(is_elf(first.bytes));
    EXPECT_FALSE(first.from_cache);
    const cuda::Cubin again = cuda::compile_cubin(clc::std_kernels_source(), "the standard kernels", 9, 0);
    EXPECT_TRUE(again.from_cache);
    EXPECT_EQ(again.bytes, first.bytes);
    // Every kernel of the set is in the image, under its OpenCL name (extern "C").
    for (const char* name :
         {"std_vector_add_f32", "std_mul_i32", "std_add_scalar_f64", "std_copy_8", "std_sum_store_bf16",
          "std_sum_load_f16", "std_matmul_f32", "std_matmul_f64", "std_gemm_f64", "std_potrf_f32"})
        EXPECT_NE(first.bytes.find(name), std::string::npos) << name;
}
#endif

TEST_F(CudaCompiler, AUsersCuKernelCompiles) {
    const cuda::Cubin c = cuda::compile_cubin(read(SIMPLER_TEST_CUDA_SAMPLE), "saxpy.cu", 9, 0);
    EXPECT_TRUE(is_elf(c.bytes));
    EXPECT_NE(c.bytes.find("saxpy_cuda"), std::string::npos);
    EXPECT_EQ(cuda::architecture_name(8, 6), "sm_86");
}

TEST_F(CudaCompiler, ASourceThatDoesNotCompileIsRefusedWithTheLog) {
    try {
        (void)cuda::compile_cubin("__kernel void broken(float* x) { x[0] = undefined_name; }\n", "broken.cu", 9, 0);
        ADD_FAILURE() << "a broken source compiled";
    } catch (const std::runtime_error& e) {
        const std::string why = e.what();
        EXPECT_EQ(why.find("CUDA: broken.cu (NVRTC 13."), 0u) << why;
        EXPECT_NE(why.find(", sm_90) does not compile (NVRTC_ERROR_COMPILATION):\n"), std::string::npos) << why;
        EXPECT_NE(why.find("broken.cu(1): error: identifier \"undefined_name\" is undefined"), std::string::npos)
            << why;
    }
}

#endif
