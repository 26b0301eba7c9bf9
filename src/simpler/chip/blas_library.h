// The BLAS / LAPACK the standard kernels call (std.matmul, std.potrf, std.trsm,
// std.syrk, std.gemm: std_blas.h), found and loaded at run time in the process
// that first runs one, never linked: the wheel carries no system BLAS, and a
// chip without one takes the kernels' portable loops.
//
// Where it is looked for, first found wins (docs/internals/chip.md):
//   1. SIMPLER_BLAS in the environment: a library path or file name, or `none`
//      for the portable loops. A library that does not load is an error, not a
//      fallback: every BLAS kernel then fails naming it.
//   2. The library the embedding registered (set_blas_candidate): the Python
//      package registers the OpenBLAS of the scipy-openblas32 wheel it
//      depends on. An error likewise when it does not load.
//   3. The system's OpenBLAS (libopenblas.so.0), when one is installed.
//   4. None: the portable loops.
// OpenBLAS's symbols are taken plain (cblas_sgemm) or with the scipy-openblas
// wheels' `scipy_` prefix. The library runs serially: OPENBLAS_NUM_THREADS is
// set to 1 before the load unless already set (so no thread pool is started in
// a chip), and openblas_set_num_threads(1) after it.
#pragma once

#include <string>

namespace simpler::chip {

// The CBLAS entry points the kernels use (the CBLAS ABI: enums as int).
struct BlasLibrary {
    using Gemm32 = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);
    using Gemm64 = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                            double*, int);
    using Trsm32 = void (*)(int, int, int, int, int, int, int, float, const float*, int, float*, int);
    using Trsm64 = void (*)(int, int, int, int, int, int, int, double, const double*, int, double*, int);
    using Syrk32 = void (*)(int, int, int, int, int, float, const float*, int, float, float*, int);
    using Syrk64 = void (*)(int, int, int, int, int, double, const double*, int, double, double*, int);
    using Potrf32 = void (*)(const char*, const int*, float*, const int*, int*);
    using Potrf64 = void (*)(const char*, const int*, double*, const int*, int*);

    Gemm32 sgemm = nullptr;
    Gemm64 dgemm = nullptr;
    Trsm32 strsm = nullptr;
    Trsm64 dtrsm = nullptr;
    Syrk32 ssyrk = nullptr;
    Syrk64 dsyrk = nullptr;
    Potrf32 spotrf = nullptr;
    Potrf64 dpotrf = nullptr;
    std::string path;  // what was loaded, as dlopen was given it
};

// The library of this process, loaded at the first call (thread-safe, once);
// nullptr when there is none (the portable loops) or it failed to load.
const BlasLibrary* blas_library() noexcept;

// Why the library that step 1 or 2 named did not load (the variable or the
// registration, the name, dlerror()'s text or the missing symbol); nullptr
// when nothing failed. Loads on the first call, as blas_library() does.
const char* blas_load_error() noexcept;

// Registers the library step 2 tries. Takes effect only before the first
// blas_library() / blas_load_error() of the process (a chip process forked
// later inherits it); an empty path clears it.
void set_blas_candidate(std::string path);

}  // namespace simpler::chip
