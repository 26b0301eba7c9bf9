#include "simpler/chip/runtime_library.h"

#include <cstdlib>
#include <string>

namespace simpler::chip {

RuntimeLibrary choose_runtime_library(const char* variable, const char* default_name) {
    const char* value = std::getenv(variable);
    const bool overridden = value != nullptr && *value != '\0';
    return {overridden ? value : default_name, variable, overridden};
}

std::string runtime_library_not_loaded(const RuntimeLibrary& lib, const char* why) {
    return lib.name + " (" + (why != nullptr ? why : "no reason given") + "); it was looked for " +
           (lib.name.find('/') != std::string::npos
                ? std::string("at that path")
                : std::string("by the dynamic linker (LD_LIBRARY_PATH, /etc/ld.so.cache, /lib, /usr/lib)")) +
           (lib.overridden ? std::string(", as ") + lib.variable + " asked" : std::string());
}

}  // namespace simpler::chip
