#include "simpler/chip/shared_library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace simpler::chip {

SharedLibrary::SharedLibrary(const std::string& path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* err = dlerror();
        throw std::runtime_error("chip library " + path + ": cannot load: " + (err ? err : "unknown error"));
    }
    void* sym = dlsym(handle_, SIMPLER_CHIP_LIBRARY_SYMBOL);
    const LibraryTable* table = nullptr;
    if (sym != nullptr) table = reinterpret_cast<LibraryTableFn>(sym)();
    if (table == nullptr) {
        dlclose(handle_);
        throw std::runtime_error("chip library " + path +
                                 ": exports no " SIMPLER_CHIP_LIBRARY_SYMBOL
                                 "() table (use SIMPLER_CHIP_EXPORT_LIBRARY)");
    }
    table_ = table;
}

SharedLibrary::~SharedLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace simpler::chip
