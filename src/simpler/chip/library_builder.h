// build_library: compiles one C++ source file of kernels / chip orchestrations
// into a shared library with the system compiler, into a cache keyed by content
// hash, and returns its path for KernelRegistry::load_library.
//
// The key is the SHA-256 of the source bytes, the compiler, the flags, the
// include directory, CHIP_ABI_VERSION and the bytes of every header the chip ABI
// is made of (simpler/chip/*.h, simpler/task_interface/*.h): a change to any of
// them is a new key, an unchanged one is a cache hit that runs no compiler.
// The cache is private (private_cache.h): a library is built in a folder made
// by mkdtemp and renamed into place, with a `<key>.so.sum` file recording its
// size and SHA-256, so concurrent builders of one key are safe; a cached
// library is a hit only when it and its .sum are this user's alone and its
// bytes match the record, else it is built again. Owns nothing after it returns.
// Host layer: std::invalid_argument for an unreadable source, std::runtime_error
// when no include directory holds the chip ABI headers, no private cache folder
// can be made or the compiler fails (the message carries the compiler's
// diagnostics).
#pragma once

#include <string>
#include <vector>

namespace simpler::chip {

struct LibraryBuildConfig {
    std::string compiler;                      // empty: $CXX, else "c++"
    std::vector<std::string> flags{"-O2"};     // added after the fixed -std=c++20 -shared -fPIC
    std::string include_dir;                   // root of the simpler headers; empty: default_chip_include_dir()
    std::string cache_dir;                     // empty: requested_cache_dir() (private_cache.h)
};

struct LibraryBuild {
    std::string path;     // the built shared library
    std::string key;      // 64 hex characters
    bool cache_hit;       // true when no compiler ran
};

LibraryBuild build_library(const std::string& source_path, const LibraryBuildConfig& config = {});

// The chip cache root in use: requested_cache_dir() ($SIMPLER_CACHE_DIR, else
// $XDG_CACHE_HOME/simpler, else $HOME/.cache/simpler, else
// $XDG_RUNTIME_DIR/simpler, else /tmp/simpler-cache-<uid>) when it is private
// to this user, else the fallback private_cache_folder() chose. The libraries
// go in its chip-libs/ subfolder, OpenCL binaries in opencl/.
std::string default_chip_cache_dir();
// The root of the simpler headers a build with an empty include_dir compiles
// against, the first of:
//   1. $SIMPLER_CHIP_INCLUDE_DIR, when set and not empty;
//   2. include/ beside the binary that holds this code, when it holds the chip
//      ABI headers: an installed package (the Python wheel's
//      site-packages/simpler/_core*.so finds site-packages/simpler/include);
//   3. empty: nothing found (build_library then refuses, naming what to set).
// A program that links the static libraries passes include_dir itself (CMake:
// simpler_INCLUDE_DIR of find_package(simpler)).
std::string default_chip_include_dir();
// `<folder of binary_path>/include` when it holds simpler/chip/library_abi.h, else empty.
std::string chip_headers_beside(const std::string& binary_path);

}  // namespace simpler::chip
