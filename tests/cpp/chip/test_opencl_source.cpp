// OpenCL C sources as chip callables, without an OpenCL device: the kernel
// names read from the text (comments, literals, directives and attributes
// skipped), a `*.cl` path loaded as a library (its kernels and "opencl:<k>"
// callables), the refusals, and a simulated chip that is asked to run one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/chip_service.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/opencl_source.h"

using namespace simpler::chip;
using chip_test::view;

namespace {

constexpr const char* SAXPY = R"CLC(
// __kernel void commented_out(void) {}
/* kernel void also_not(void) {} */
#define NOT_A_KERNEL "__kernel void in_a_string(void)"
__kernel void saxpy(__global const float* x, const simpler_view vx, __global float* y, const simpler_view vy,
                    const ulong a) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(vy)) y[simpler_at(vy, i)] += as_float((uint)a) * x[simpler_at(vx, i)];
}
kernel __attribute__((reqd_work_group_size(64, 1, 1))) void scale(__global float* y) { y[get_global_id(0)] *= 2; }
__kernel void __attribute__((vec_type_hint(float4))) third(__global float* z) { z[0] = 0; }
inline float helper(float v) { return v; }
)CLC";

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST(OpenClSource, FindsEveryKernelAndNothingElse) {
    EXPECT_EQ(opencl_kernel_names(SAXPY), (std::vector<std::string>{"saxpy", "scale", "third"}));
    EXPECT_TRUE(opencl_kernel_names("float f(float x) { return x; }").empty());
    EXPECT_TRUE(is_opencl_source_path("/a/b/k.cl"));
    EXPECT_FALSE(is_opencl_source_path("/a/b/k.cl.so"));
    EXPECT_FALSE(is_opencl_source_path(".cl"));
}

TEST(OpenClSource, APathEndingInClLoadsAsOpenClKernelsAndCallables) {
    KernelRegistry r;
    register_standard_library(r);
    const std::string path = write_temp("saxpy_registry.cl", SAXPY);
    r.load_library(path);
    uint32_t id = 0;
    ASSERT_TRUE(r.find_kernel("saxpy", &id));
    ASSERT_NE(r.opencl_source(id), nullptr);
    EXPECT_EQ(r.opencl_source(id)->origin, path);
    EXPECT_EQ(r.opencl_source(id)->text, SAXPY);
    uint32_t std_id = 0;
    ASSERT_TRUE(r.find_kernel("std.copy", &std_id));
    EXPECT_EQ(r.opencl_source(std_id), nullptr);
    EXPECT_EQ(r.opencl_kernel_names(), (std::vector<std::string>{"saxpy", "scale", "third"}));
    const std::vector<std::string> names = r.orchestration_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "opencl:saxpy"), names.end());
    // A second source with a kernel of the same name is refused whole.
    EXPECT_THROW(r.add_opencl_source("__kernel void fresh(void) {} __kernel void scale(void) {}", "again"),
                 std::invalid_argument);
    EXPECT_FALSE(r.find_kernel("fresh", &id));
    EXPECT_THROW(r.add_opencl_source("void no_kernel(void) {}", "plain"), std::invalid_argument);
    EXPECT_THROW(r.load_library(::testing::TempDir() + "missing_file.cl"), std::runtime_error);
}

TEST(OpenClSource, ASimulatedChipRefusesToRunOneSayingWhere) {
    ChipServiceConfig c;
    c.arena_bytes = 1 << 20;
    c.libraries = {write_temp("saxpy_simulated.cl", SAXPY)};
    c.orchestrations = {"opencl:saxpy"};
    ChipService service(c);
    std::vector<float> x(8, 1.0f), y(8, 0.0f);
    ChipStorageTaskArgs args{};
    args.add_tensor(view(x.data(), 32, 0, {8}, {1}));
    args.add_tensor(view(y.data(), 32, 0, {8}, {1}));
    args.add_scalar(0);
    const TensorArgType tags[2] = {TensorArgType::INPUT, TensorArgType::INOUT};
    const ChipServiceResult r = service.run(0, args, tags, simpler::CallConfig{});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("kernel 'saxpy'"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("it is OpenCL C, which runs on OpenCL chips only"), std::string::npos) << r.error;
    // A callable name no source defines is refused as a chip orchestration name is.
    ChipServiceConfig unknown = c;
    unknown.orchestrations = {"opencl:nope"};
    EXPECT_THROW(ChipService{unknown}, std::invalid_argument);
}
