// Where this process finds MPI, at run time, never linked, so the extension
// imports where no MPI is installed and only remote use needs one: the first
// MpiTransport::start() (or mpi_library()) loads
//   - MPI itself, with its symbols global: SIMPLER_MPI_LIBRARY in the
//     environment (a path), else the soname this build was made against
//     (libmpi.so.40 for Open MPI 4 and 5), found as the dynamic linker finds
//     any library;
//   - then the MPI shim (libsimpler_mpi.so, mpi_api.h), whose MPI symbols
//     resolve against it, the first of (docs/internals/remote.md):
//       1. SIMPLER_MPI_SHIM in the environment (a path);
//       2. the path the embedding registered (set_mpi_shim_candidate): the
//          Python package registers the copy installed in its lib folder;
//       3. libsimpler_mpi.so on the dynamic linker's path.
// When either does not load, mpi_library() throws std::runtime_error naming
// the library, why (dlerror()), and for MPI how to get it; for the shim,
// where it was looked for. The outcome is kept: a later call says the same.
#pragma once

#include <string>

#include "simpler/remote/mpi/mpi_api.h"

namespace simpler {

// The loaded shim's table (loaded once; thread-safe); std::runtime_error as above.
const SimplerMpiApi& mpi_library();

// The shim that loaded, the MPI it runs and that MPI's library
// (".../libsimpler_mpi.so (Open MPI v4.1.4, libmpi.so.40)"), loading
// it as mpi_library() does; empty when it did not load.
std::string mpi_library_description();

// Registers the shim step 2 tries; takes effect only before the first
// mpi_library() of the process.
void set_mpi_shim_candidate(std::string path);

}  // namespace simpler
