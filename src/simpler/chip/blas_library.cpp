#include "simpler/chip/blas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <utility>

namespace simpler::chip {
namespace {

struct Loaded {
    std::optional<BlasLibrary> library;
    std::string error;
};

std::string& candidate() {
    static std::string path;
    return path;
}

template <typename Fn>
bool take(void* handle, const char* prefix, const char* name, Fn& out) {
    const std::string symbol = std::string(prefix) + name;
    out = reinterpret_cast<Fn>(dlsym(handle, symbol.c_str()));
    return out != nullptr;
}

// dlopen's error for `name`, or the first entry point it lacks; the library
// filled in when every entry point is there.
std::string open(const std::string& name, std::optional<BlasLibrary>& out) {
    // No thread pool in the library (read by OpenBLAS as it loads): its
    // callers are a chip's core threads.
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* e = dlerror();
        return e != nullptr ? e : "dlopen failed";
    }
    // The scipy-openblas wheels prefix every symbol with `scipy_`.
    const char* prefix = dlsym(handle, "scipy_cblas_sgemm") != nullptr ? "scipy_" : "";
    BlasLibrary lib;
    const char* missing = nullptr;
    auto need = [&](const char* symbol, auto& fn) {
        if (missing == nullptr && !take(handle, prefix, symbol, fn)) missing = symbol;
    };
    need("cblas_sgemm", lib.sgemm);
    need("cblas_dgemm", lib.dgemm);
    need("cblas_strsm", lib.strsm);
    need("cblas_dtrsm", lib.dtrsm);
    need("cblas_ssyrk", lib.ssyrk);
    need("cblas_dsyrk", lib.dsyrk);
    need("spotrf_", lib.spotrf);
    need("dpotrf_", lib.dpotrf);
    if (missing != nullptr) {
        dlclose(handle);
        return std::string(name) + " has no " + prefix + missing + " (not a CBLAS + LAPACK library)";
    }
    void (*set_threads)(int) = nullptr;
    if (take(handle, prefix, "openblas_set_num_threads", set_threads)) set_threads(1);
    lib.path = name;
    out = std::move(lib);
    return {};
}

Loaded load() {
    Loaded l;
    if (const char* env = std::getenv("SIMPLER_BLAS"); env != nullptr && *env != '\0') {
        if (std::string(env) == "none") return l;
        if (std::string e = open(env, l.library); !e.empty())
            l.error = "SIMPLER_BLAS=" + std::string(env) + " did not load: " + e;
        return l;
    }
    if (!candidate().empty()) {
        if (std::string e = open(candidate(), l.library); !e.empty())
            l.error = "the registered BLAS " + candidate() + " did not load: " + e +
                      " (set SIMPLER_BLAS to another library, or to none for the portable loops)";
        return l;
    }
    // The system's OpenBLAS, when installed (Debian: libopenblas0-serial); else the portable loops.
    (void)open("libopenblas.so.0", l.library);
    return l;
}

const Loaded& loaded() {
    static const Loaded l = load();
    return l;
}

}  // namespace

const BlasLibrary* blas_library() noexcept {
    const Loaded& l = loaded();
    return l.library ? &*l.library : nullptr;
}

const char* blas_load_error() noexcept {
    const Loaded& l = loaded();
    return l.error.empty() ? nullptr : l.error.c_str();
}

void set_blas_candidate(std::string path) { candidate() = std::move(path); }

}  // namespace simpler::chip
