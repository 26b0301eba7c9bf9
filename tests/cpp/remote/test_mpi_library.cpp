// Where a process finds MPI (remote/mpi/mpi_library.h): the MPI shim, loaded
// at run time, never linked. Loading happens once a process, so each case
// runs in a fresh one (a death test in the "threadsafe" style re-executes the
// test binary). The shim over a missing libmpi is checked end to end by
// tests/py/test_mpi_masked.py (a mount namespace hides Open MPI).
#ifdef SIMPLER_HAVE_MPI
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "simpler/remote/mpi/mpi_library.h"
#include "simpler/remote/mpi/mpi_transport.h"

namespace {

using namespace simpler;

template <typename Check>
void in_fresh_process(const char* shim, const Check& check) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            unsetenv("SIMPLER_MPI_LIBRARY");
            if (shim != nullptr)
                setenv("SIMPLER_MPI_SHIM", shim, 1);
            else
                unsetenv("SIMPLER_MPI_SHIM");
            std::exit(check() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

// The message mpi_library() throws, or "" when it loads.
std::string load_error() {
    try {
        (void)mpi_library();
        return {};
    } catch (const std::runtime_error& e) {
        return e.what();
    }
}

bool says(const std::string& text, const std::string& what) {
    if (text.find(what) != std::string::npos) return true;
    fprintf(stderr, "message: %s\nwanted: %s\n", text.c_str(), what.c_str());
    return false;
}

// ctest names the build tree's shim in SIMPLER_MPI_SHIM (tests/cpp/CMakeLists.txt).
TEST(MpiLibraryDeathTest, TheBuildTreesShimLoadsAndSaysWhichMpi) {
    const char* shim = std::getenv("SIMPLER_MPI_SHIM");
    if (shim == nullptr) GTEST_SKIP() << "SIMPLER_MPI_SHIM names no shim (ctest names the build tree's)";
    const std::string named = shim;
    in_fresh_process(named.c_str(), [] {
        const SimplerMpiApi& api = mpi_library();
        const std::string d = mpi_library_description();
        return api.version == SIMPLER_MPI_API_VERSION && says(d, "libsimpler_mpi.so (") && says(d, ", libmpi.so.");
    });
}

TEST(MpiLibraryDeathTest, AnMpiThatDoesNotLoadIsAnErrorNamingItWhyAndHowToGetIt) {
    in_fresh_process(nullptr, [] {
        setenv("SIMPLER_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
        const std::string e = load_error();
        return says(e,
                    "remote: MPI could not be loaded: /nonexistent/libmpi.so.40 did not load: "
                    "/nonexistent/libmpi.so.40: cannot open shared object file") &&
               says(e, "remote Workers need the MPI this build of simpler was made with (libmpi.so.") &&
               says(e, "apt install openmpi-bin") && says(e, "LD_LIBRARY_PATH") && load_error() == e &&
               mpi_library_description().empty();
    });
}

TEST(MpiLibraryDeathTest, AShimThatDoesNotLoadIsAnErrorNamingItAndWhereItWasLookedFor) {
    in_fresh_process("/nonexistent/libsimpler_mpi.so", [] {
        const std::string e = load_error();
        return says(e,
                    "remote: the MPI shim /nonexistent/libsimpler_mpi.so did not load: "
                    "/nonexistent/libsimpler_mpi.so: cannot open shared object file") &&
               says(e, "the shim is the first of: /nonexistent/libsimpler_mpi.so (SIMPLER_MPI_SHIM)") &&
               load_error() == e;
    });
}

TEST(MpiLibraryDeathTest, ALibraryWithoutTheEntryPointIsNotTaken) {
    in_fresh_process("libm.so.6", [] {
        return says(load_error(), "remote: libm.so.6 is not this build's MPI shim (no simpler_mpi_api)");
    });
}

TEST(MpiLibraryDeathTest, TheTransportFailsToStartWithTheSameMessageAndStaysStopped) {
    in_fresh_process("/nonexistent/libsimpler_mpi.so", [] {
        MpiTransport& t = MpiTransport::process();
        try {
            t.start();
        } catch (const std::runtime_error& e) {
            return says(e.what(), "remote: the MPI shim /nonexistent/libsimpler_mpi.so did not load") && !t.started();
        }
        return false;
    });
}

}  // namespace
#endif
