// A library the project opens at run time and never links (the OpenCL ICD
// loader, the CUDA driver, NVRTC): which file (the one an environment variable
// names, else the default), how a dlopen that failed is told, so every such
// library says where it was looked for in the same words, and its entry points
// bound by name.
#pragma once

#include <dlfcn.h>

#include <string>

namespace simpler::chip {

struct RuntimeLibrary {
    std::string name;      // what dlopen is given
    const char* variable;  // the environment variable that may name another file
    bool overridden;       // `variable` named it
};

// `variable`'s value when it is set and not empty, else `default_name`.
[[nodiscard]] RuntimeLibrary choose_runtime_library(const char* variable, const char* default_name);

// "<name> (<why>); it was looked for at that path | by the dynamic linker
// (...)[, as <variable> asked]" after a dlopen of `lib` failed with `why`
// (dlerror()'s text, or nullptr).
[[nodiscard]] std::string runtime_library_not_loaded(const RuntimeLibrary& lib, const char* why);

// Sets `out` to entry point `name` of the library `handle` (dlsym); when it
// has none, `out` is null and `missing` names it, unless `missing` already
// names an entry point found missing before it.
template <typename Fn>
void bind_entry_point(void* handle, const char* name, Fn& out, std::string& missing) {
    out = reinterpret_cast<Fn>(dlsym(handle, name));
    if (out == nullptr && missing.empty()) missing = name;
}

}  // namespace simpler::chip
