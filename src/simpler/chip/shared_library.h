// SharedLibrary: one dlopen()ed kernel / orchestration library and its table.
// Move-only; dlclose()s on destruction, so whoever holds the function pointers
// of its table must hold the SharedLibrary too (KernelRegistry does).
//
// Trusts the library's code (it runs in-process) but not its table: the
// registry validates every entry before use. Throws std::runtime_error with
// dlerror()'s text when the file cannot be loaded or exports no table.
#pragma once

#include <string>

#include "simpler/chip/library_abi.h"

namespace simpler::chip {

class SharedLibrary {
public:
    explicit SharedLibrary(const std::string& path);
    ~SharedLibrary();
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    [[nodiscard]] const LibraryTable& table() const noexcept { return *table_; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    void* handle_ = nullptr;
    const LibraryTable* table_ = nullptr;
};

}  // namespace simpler::chip
