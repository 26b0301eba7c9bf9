#include "simpler/remote/mpi/mpi_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

namespace simpler {
namespace {

struct Loaded {
    const SimplerMpiApi* api = nullptr;
    std::string description;
    std::string error;
};

std::string& candidate() {
    static std::string path;
    return path;
}

// How to get the MPI the shim was built against.
constexpr const char* HOW_TO_GET_MPI =
    "remote Workers need the MPI this build of simpler was made with (" SIMPLER_MPI_SONAME ", MPI " SIMPLER_MPI_VERSION
    "): install it (Debian/Ubuntu: apt install openmpi-bin; a cluster: load its Open MPI module) so that the "
    "dynamic linker finds it (its lib folder on LD_LIBRARY_PATH), or name the library in SIMPLER_MPI_LIBRARY";

Loaded load() {
    Loaded l;
    // MPI itself, its symbols global: the shim's resolve against them.
    const char* mpi = std::getenv("SIMPLER_MPI_LIBRARY");
    if (mpi == nullptr || *mpi == '\0') mpi = SIMPLER_MPI_SONAME;
    if (dlopen(mpi, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
        const char* e = dlerror();
        l.error = std::string("remote: MPI could not be loaded: ") + mpi +
                  " did not load: " + (e ? e : "dlopen failed") + ". " + HOW_TO_GET_MPI;
        return l;
    }
    // Where to look, and what named each place; the first is loaded.
    std::vector<std::pair<std::string, std::string>> places;
    if (const char* env = std::getenv("SIMPLER_MPI_SHIM"); env != nullptr && *env != '\0')
        places.emplace_back(env, "SIMPLER_MPI_SHIM");
    if (!candidate().empty()) places.emplace_back(candidate(), "registered");
    places.emplace_back("libsimpler_mpi.so", "the dynamic linker's path");
    std::string looked;
    for (const auto& [path, why] : places) looked += (looked.empty() ? "" : ", ") + path + " (" + why + ")";
    const std::string* chosen = &places.front().first;
    void* handle = dlopen(chosen->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* e = dlerror();
        l.error = "remote: the MPI shim " + *chosen + " did not load: " + (e ? e : "dlopen failed") +
                  " (the shim is the first of: " + looked + "; SIMPLER_MPI_SHIM names another)";
        return l;
    }
    const auto entry = reinterpret_cast<SimplerMpiApiEntry>(dlsym(handle, "simpler_mpi_api"));
    const SimplerMpiApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->version != SIMPLER_MPI_API_VERSION) {
        l.error = "remote: " + *chosen + " is not this build's MPI shim (" +
                  (api == nullptr ? std::string("no simpler_mpi_api")
                                  : "API version " + std::to_string(api->version) + ", this build's is " +
                                        std::to_string(SIMPLER_MPI_API_VERSION)) +
                  ")";
        dlclose(handle);
        return l;
    }
    char version[256];
    api->library_version(version, sizeof version);
    l.api = api;
    l.description = *chosen + " (" + version + ", " + mpi + ")";
    return l;
}

const Loaded& loaded() {
    static const Loaded l = load();
    return l;
}

}  // namespace

const SimplerMpiApi& mpi_library() {
    const Loaded& l = loaded();
    if (l.api == nullptr) throw std::runtime_error(l.error);
    return *l.api;
}

std::string mpi_library_description() {
    const Loaded& l = loaded();
    return l.api != nullptr ? l.description : std::string();
}

void set_mpi_shim_candidate(std::string path) { candidate() = std::move(path); }

}  // namespace simpler
