// Which BLAS the standard kernels load at run time (chip/blas_library.h):
// SIMPLER_BLAS, then the registered library, then the system's, else none;
// a named library that does not load is an error every BLAS kernel reports.
// The library is loaded once a process, so each case runs in a fresh one (a
// death test in the "threadsafe" style re-executes the test binary).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/blas_library.h"
#include "std_kernel_fixture.h"

namespace {

using namespace std_kernel_test;
using chip_test::dense;

// Exits 0 when `check` holds in a process whose environment names `blas`
// (nullptr: SIMPLER_BLAS unset) and which registered `candidate`.
template <typename Check>
void in_fresh_process(const char* blas, const std::string& candidate, const Check& check) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            if (blas != nullptr)
                setenv("SIMPLER_BLAS", blas, 1);
            else
                unsetenv("SIMPLER_BLAS");
            set_blas_candidate(candidate);
            std::exit(check() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

bool error_says(const std::string& what) {
    const char* e = blas_load_error();
    if (e == nullptr || std::string(e).find(what) == std::string::npos) {
        fprintf(stderr, "blas_load_error(): %s\nwanted: %s\n", e ? e : "(none)", what.c_str());
        return false;
    }
    return blas_library() == nullptr;
}

TEST(BlasLibraryDeathTest, NoneTakesThePortableLoopsWithoutAnError) {
    in_fresh_process("none", "/nonexistent/libregistered.so",
                     [] { return blas_library() == nullptr && blas_load_error() == nullptr; });
}

TEST(BlasLibraryDeathTest, ALibraryTheVariableNamesThatDoesNotLoadIsAnErrorNamingIt) {
    in_fresh_process("/nonexistent/libblas.so", "", [] {
        return error_says("SIMPLER_BLAS=/nonexistent/libblas.so did not load: /nonexistent/libblas.so: cannot open");
    });
}

TEST(BlasLibraryDeathTest, ALibraryWithoutCblasIsAnErrorNamingTheMissingSymbol) {
    in_fresh_process("libm.so.6", "", [] {
        return error_says("SIMPLER_BLAS=libm.so.6 did not load: libm.so.6 has no cblas_sgemm (not a CBLAS + LAPACK");
    });
}

TEST(BlasLibraryDeathTest, ARegisteredLibraryThatDoesNotLoadIsAnErrorNamingIt) {
    in_fresh_process(nullptr, "/nonexistent/libregistered.so", [] {
        return error_says("the registered BLAS /nonexistent/libregistered.so did not load") &&
               error_says("set SIMPLER_BLAS to another library, or to none");
    });
}

TEST(BlasLibraryDeathTest, EveryBlasKernelFailsNamingTheLibraryThatDidNotLoad) {
    in_fresh_process("/nonexistent/libblas.so", "", [] {
        Chip chip{config(StagingMode::ZERO_COPY)};
        std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, -1.0f);
        const ChipTensor av = dense(a, {4, 4}), bv = dense(b, {4, 4}), cv = dense(c, {4, 4});
        const RunResult r = run_on(chip, "std.matmul", {av, bv, cv}, {IN, IN, OUT});
        const bool matmul =
            !r.ok && r.error.find("std.matmul: SIMPLER_BLAS=/nonexistent/libblas.so") != std::string::npos;
        const RunResult p = run_on(chip, "std.potrf", {cv}, {INOUT});
        const bool potrf =
            !p.ok && p.error.find("std.potrf: SIMPLER_BLAS=/nonexistent/libblas.so") != std::string::npos;
        if (!matmul || !potrf) fprintf(stderr, "matmul: %s\npotrf: %s\n", r.error.c_str(), p.error.c_str());
        return matmul && potrf && c[0] == -1.0f;  // nothing written
    });
}

// The library ./dev test names (the Python package's scipy-openblas32) loads,
// runs serially and computes.
TEST(BlasLibraryDeathTest, TheLibraryTheVariableNamesLoadsSeriallyAndComputes) {
    const char* blas = std::getenv("SIMPLER_BLAS");
    if (blas == nullptr || std::string(blas).empty() || std::string(blas) == "none")
        GTEST_SKIP() << "SIMPLER_BLAS names no library (./dev test names the scipy-openblas32 wheel's)";
    const std::string named = blas;
    in_fresh_process(named.c_str(), "", [named] {
        unsetenv("OPENBLAS_NUM_THREADS");
        const BlasLibrary* lib = blas_library();
        if (lib == nullptr || lib->path != named) return false;
        const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
        float c[4] = {};
        lib->sgemm(101, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);  // row-major, no transposes
        const char* threads = std::getenv("OPENBLAS_NUM_THREADS");  // set for the load: no thread pool
        return c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50 && threads != nullptr &&
               std::string(threads) == "1";
    });
}

}  // namespace
