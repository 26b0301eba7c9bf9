// OpenCL C sources as chip callables, without an OpenCL device: the kernel
// names read from the text (comments, literals, directives and attributes
// skipped), a `*.cl` path loaded as a library (its kernels and "opencl:<k>"
// callables), the refusals, a simulated chip that is asked to run one, and a
// kernel with both a C++ and an OpenCL form (registered apart or by one library).
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

namespace {
int32_t twice_cpp(const KernelArgs*) { return CHIP_OK; }
int32_t other_cpp(const KernelArgs*) { return CHIP_OK; }
}  // namespace

TEST(OpenClSource, AKernelHasACppFormAndAnOpenClFormInEitherOrderButOneOfEach) {
    KernelRegistry r;
    const uint32_t id = r.add_kernel("twice", twice_cpp);
    EXPECT_EQ(r.opencl_source(id), nullptr);
    const std::vector<uint32_t> forms = r.add_opencl_source("__kernel void twice(__global float* x) {}", "twice.cl");
    EXPECT_EQ(forms, (std::vector<uint32_t>{id}));
    EXPECT_EQ(r.kernel(id), &twice_cpp);  // the C++ form is kept
    ASSERT_NE(r.opencl_source(id), nullptr);
    EXPECT_EQ(r.opencl_source(id)->origin, "twice.cl");
    EXPECT_EQ(r.kernel_count(), 1u);
    // A second form of either kind is a duplicate, and a refused source registers nothing.
    EXPECT_THROW(r.add_kernel("twice", other_cpp), std::invalid_argument);
    EXPECT_THROW(r.add_opencl_source("__kernel void fresh(void) {} __kernel void twice(void) {}", "again"),
                 std::invalid_argument);
    uint32_t missing = 0;
    EXPECT_FALSE(r.find_kernel("fresh", &missing));
    // The other order: an OpenCL form first, a C++ form joins it.
    r.add_opencl_source("__kernel void later(__global float* x) {}", "later.cl");
    uint32_t later = 0;
    ASSERT_TRUE(r.find_kernel("later", &later));
    EXPECT_NE(r.kernel(later), nullptr);  // the OpenCL-only stand-in, which fails saying so
    EXPECT_EQ(r.add_kernel("later", other_cpp), later);
    EXPECT_EQ(r.kernel(later), &other_cpp);
}

TEST(OpenClSource, ALibraryCarriesTheOpenClFormsOfItsKernels) {
    static const char* const SOURCE = "__kernel void lib_k(__global float* x) {} __kernel void lib_cl_only(void) {}";
    const LibraryEntry entries[] = {kernel_entry("lib_k", twice_cpp), opencl_source_entry("lib kernels", SOURCE)};
    KernelRegistry r;
    const std::vector<uint32_t> forms = r.add_library(LibraryTable{CHIP_ABI_VERSION, 2, entries}, "lib.so");
    ASSERT_EQ(forms.size(), 2u);
    EXPECT_EQ(r.kernel(forms[0]), &twice_cpp);
    EXPECT_EQ(r.kernel_name(forms[1]), std::string("lib_cl_only"));
    EXPECT_EQ(r.opencl_source(forms[0])->origin, "lib.so (lib kernels)");
    // Refused whole: an entry with no text, a source with no kernel, an OpenCL form registered already.
    const LibraryEntry no_text[] = {kernel_entry("fresh_k", twice_cpp), opencl_source_entry("empty", nullptr)};
    EXPECT_THROW(r.add_library(LibraryTable{CHIP_ABI_VERSION, 2, no_text}, "no_text.so"), std::invalid_argument);
    const LibraryEntry no_kernel[] = {opencl_source_entry("plain", "void f(void) {}")};
    EXPECT_THROW(r.add_library(LibraryTable{CHIP_ABI_VERSION, 1, no_kernel}, "plain.so"), std::invalid_argument);
    const LibraryEntry again[] = {opencl_source_entry("again", "__kernel void lib_k(void) {}")};
    EXPECT_THROW(r.add_library(LibraryTable{CHIP_ABI_VERSION, 1, again}, "again.so"), std::invalid_argument);
    uint32_t id = 0;
    EXPECT_FALSE(r.find_kernel("fresh_k", &id));
}
