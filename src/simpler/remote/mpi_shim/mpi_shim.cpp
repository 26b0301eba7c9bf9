// libsimpler_mpi.so: the MPI calls of the remote transport (mpi/mpi_api.h),
// compiled against this build's mpi.h. The only code of simpler that names
// MPI, and it links none: its MPI symbols resolve against the libmpi that
// mpi/mpi_library.h loads first, with its symbols global, when remote
// Workers are first used; where libmpi is missing only that fails.
#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "simpler/remote/mpi/mpi_api.h"

namespace {

// MPI's handle bits as an opaque 64-bit handle, its null handle as 0.
template <typename H>
SimplerMpiHandle encode(H h, H null) {
    static_assert(sizeof(H) <= sizeof(SimplerMpiHandle), "an MPI handle wider than 64 bits");
    if (h == null) return 0;
    SimplerMpiHandle out = 0;
    std::memcpy(static_cast<void*>(&out), static_cast<const void*>(&h), sizeof(H));
    return out;
}

template <typename H>
H decode(SimplerMpiHandle v, H null) {
    if (v == 0) return null;
    H h{};
    std::memcpy(static_cast<void*>(&h), static_cast<const void*>(&v), sizeof(H));
    return h;
}

MPI_Comm comm(SimplerMpiHandle c) { return decode(c, MPI_COMM_NULL); }

void copy_text(const char* from, int length, char* text, int capacity) {
    if (capacity <= 0) return;
    const int n = length < capacity - 1 ? length : capacity - 1;
    std::memcpy(text, from, static_cast<size_t>(n));
    text[n] = '\0';
}

int init_thread_multiple(int* provided, int* multiple) {
    *multiple = MPI_THREAD_MULTIPLE;
    int initialized = 0;
    if (const int rc = MPI_Initialized(&initialized); rc != MPI_SUCCESS) return rc;
    if (initialized != 0) return MPI_Query_thread(provided);
    return MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, provided);
}

int dup_world(SimplerMpiHandle* out, int* rank, int* size) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c, rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c, size);
    *out = encode(c, MPI_COMM_NULL);
    return rc;
}

int comm_free(SimplerMpiHandle* c) {
    MPI_Comm h = comm(*c);
    const int rc = h == MPI_COMM_NULL ? MPI_SUCCESS : MPI_Comm_free(&h);
    *c = 0;
    return rc;
}

int finalize() { return MPI_Finalize(); }

int isend(const void* data, int nbytes, int peer, int tag, SimplerMpiHandle c, SimplerMpiHandle* request) {
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(data, nbytes, MPI_BYTE, peer, tag, comm(c), &r);
    *request = encode(r, MPI_REQUEST_NULL);
    return rc;
}

int irecv(void* data, int nbytes, int peer, int tag, SimplerMpiHandle c, SimplerMpiHandle* request) {
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Irecv(data, nbytes, MPI_BYTE, peer, tag, comm(c), &r);
    *request = encode(r, MPI_REQUEST_NULL);
    return rc;
}

int test(SimplerMpiHandle* request, int* done, int* received) {
    MPI_Request r = decode(*request, MPI_REQUEST_NULL);
    MPI_Status status{};
    const int rc = MPI_Test(&r, done, &status);
    *request = encode(r, MPI_REQUEST_NULL);
    if (rc == MPI_SUCCESS && *done != 0 && received != nullptr) MPI_Get_count(&status, MPI_BYTE, received);
    return rc;
}

int cancel_free(SimplerMpiHandle* request, int cancel) {
    MPI_Request r = decode(*request, MPI_REQUEST_NULL);
    int rc = MPI_SUCCESS;
    if (r != MPI_REQUEST_NULL) {
        if (cancel != 0) rc = MPI_Cancel(&r);
        const int freed = MPI_Request_free(&r);
        if (rc == MPI_SUCCESS) rc = freed;
    }
    *request = 0;
    return rc;
}

int improbe(int peer, int tag, SimplerMpiHandle c, int* found, SimplerMpiHandle* message, int* source, int* nbytes) {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status status{};
    const int rc = MPI_Improbe(peer < 0 ? MPI_ANY_SOURCE : peer, tag, comm(c), found, &m, &status);
    *message = encode(m, MPI_MESSAGE_NULL);
    if (rc == MPI_SUCCESS && *found != 0) {
        *source = status.MPI_SOURCE;
        MPI_Get_count(&status, MPI_BYTE, nbytes);
    }
    return rc;
}

int mrecv(void* data, int nbytes, SimplerMpiHandle* message) {
    MPI_Message m = decode(*message, MPI_MESSAGE_NULL);
    const int rc = MPI_Mrecv(data, nbytes, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    *message = encode(m, MPI_MESSAGE_NULL);
    return rc;
}

void error_text(int rc, char* text, int capacity) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) len = std::snprintf(s, sizeof s, "MPI error %d", rc);
    copy_text(s, len, text, capacity);
}

void library_version(char* text, int capacity) {
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(s, &len) != MPI_SUCCESS) len = 0;
    int end = 0;  // the name and version: up to the first comma or line end
    while (end < len && s[end] != '\n' && s[end] != ',') ++end;
    copy_text(s, end, text, capacity);
}

const SimplerMpiApi API{
    .version = SIMPLER_MPI_API_VERSION,
    .init_thread_multiple = init_thread_multiple,
    .dup_world = dup_world,
    .comm_free = comm_free,
    .finalize = finalize,
    .isend = isend,
    .irecv = irecv,
    .test = test,
    .cancel_free = cancel_free,
    .improbe = improbe,
    .mrecv = mrecv,
    .error_text = error_text,
    .library_version = library_version,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const SimplerMpiApi* simpler_mpi_api() { return &API; }
