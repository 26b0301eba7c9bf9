// The MPI calls the remote transport makes, as the MPI shim exports them
// (libsimpler_mpi.so, remote/mpi_shim/): a C table of functions over opaque
// 64-bit handles, so that the shim alone is compiled against mpi.h. Nothing
// links MPI, the shim included: mpi_library.h loads MPI (its symbols global,
// which the shim's resolve against) and then the shim when remote Workers are
// first used, and a machine without MPI imports and runs everything else.
//
// Every function returns MPI's error code (MPI_SUCCESS is 0 in every MPI).
// A handle is a communicator, request or matched message as the shim encodes
// it (MPI's handle bits, whatever its type: a pointer in Open MPI, an int in
// MPICH); 0 is the null handle of its kind.
#pragma once

#include <cstdint>

extern "C" {

using SimplerMpiHandle = uint64_t;

// Bumped whenever the table changes; the loader refuses a shim of another.
inline constexpr uint32_t SIMPLER_MPI_API_VERSION = 1;

struct SimplerMpiApi {
    uint32_t version;  // SIMPLER_MPI_API_VERSION
    // MPI_Init_thread(MPI_THREAD_MULTIPLE) unless MPI is initialized (then the
    // level it has): the level given and the value of MPI_THREAD_MULTIPLE.
    int (*init_thread_multiple)(int* provided, int* multiple);
    // A duplicate of MPI_COMM_WORLD whose errors are returned, and its rank and size.
    int (*dup_world)(SimplerMpiHandle* comm, int* rank, int* size);
    int (*comm_free)(SimplerMpiHandle* comm);
    int (*finalize)();
    // Byte messages (MPI_BYTE).
    int (*isend)(const void* data, int nbytes, int peer, int tag, SimplerMpiHandle comm, SimplerMpiHandle* request);
    int (*irecv)(void* data, int nbytes, int peer, int tag, SimplerMpiHandle comm, SimplerMpiHandle* request);
    // MPI_Test; *received: the bytes a completed receive took in (may be null).
    int (*test)(SimplerMpiHandle* request, int* done, int* received);
    // MPI_Cancel (when `cancel`), then MPI_Request_free.
    int (*cancel_free)(SimplerMpiHandle* request, int cancel);
    // MPI_Improbe from `peer` (-1: any source): whether a message is there, it,
    // its source and its length in bytes.
    int (*improbe)(int peer, int tag, SimplerMpiHandle comm, int* found, SimplerMpiHandle* message, int* source,
                   int* nbytes);
    int (*mrecv)(void* data, int nbytes, SimplerMpiHandle* message);
    // MPI_Error_string into `text` (NUL-terminated, cut to `capacity`).
    void (*error_text)(int rc, char* text, int capacity);
    // MPI_Get_library_version up to its first comma or line end ("Open MPI
    // v4.1.4") into `text`, as above.
    void (*library_version)(char* text, int capacity);
};

// The shim's one exported symbol.
const SimplerMpiApi* simpler_mpi_api();
using SimplerMpiApiEntry = const SimplerMpiApi* (*)();

}  // extern "C"
