// Where this process finds MPI: the MPI shim (libsimpler_mpi.so, mpi_api.h),
// loaded at run time by the first MpiTransport::start(), never linked, so the
// extension imports where no MPI is installed and only remote use needs one.
//
// The shim is looked for, first found wins (docs/remote.md):
//   1. SIMPLER_MPI_SHIM in the environment (a path);
//   2. the path the embedding registered (set_mpi_shim_candidate): the Python
//      package registers the copy installed beside its extension;
//   3. the build tree's (the C++ tests), when that file is there;
//   4. libsimpler_mpi.so on the dynamic linker's path.
// The shim needs the MPI it was built against (its libmpi); when that is not
// installed the load fails, and mpi_library() throws std::runtime_error naming
// the library that did not load, why (dlerror()), where the shim was looked
// for, and how to get MPI. The outcome is kept: a later call says the same.
#pragma once

#include <string>

#include "simpler/remote/mpi/mpi_api.h"

namespace simpler {

// The loaded shim's table (loaded once; thread-safe); std::runtime_error as above.
const SimplerMpiApi& mpi_library();

// The shim that loaded and the MPI it runs ("Open MPI v4.1.4, ..."), loading
// it as mpi_library() does; empty when it did not load.
std::string mpi_library_description();

// Registers the shim step 2 tries; takes effect only before the first
// mpi_library() of the process.
void set_mpi_shim_candidate(std::string path);

}  // namespace simpler
