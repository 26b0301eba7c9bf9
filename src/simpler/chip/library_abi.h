// The table a kernel / orchestration library exports: one entry per named
// kernel or chip orchestration, and the one exported symbol that returns it.
// A library (the built-in standard set, one built from source, a prebuilt .so)
// lists its functions with SIMPLER_CHIP_EXPORT_LIBRARY(entries).
//
// An OPENCL_SOURCE entry carries OpenCL C text: each `__kernel` in it is the
// OpenCL form of the kernel of that name, so one library runs on both devices —
// a simulated chip calls a kernel's C++ function, an OpenCL chip launches its
// OpenCL form (kernel_registry.h). A kernel may have either form or both.
//
// Only the table crosses the dlopen boundary; the loader checks its ABI version
// and every entry (non-null name, known kind, the matching function set) before
// registering anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/chip/kernel_api.h"
#include "simpler/chip/orchestration_api.h"

namespace simpler::chip {

enum class LibraryEntryKind : uint32_t { KERNEL = 0, ORCHESTRATION = 1, OPENCL_SOURCE = 2 };

struct LibraryEntry {
    const char* name;                // OPENCL_SOURCE: what errors call the source
    LibraryEntryKind kind;
    KernelFn kernel;                 // set when kind == KERNEL
    OrchestrationFn orchestration;   // set when kind == ORCHESTRATION
    const char* opencl_source;       // set when kind == OPENCL_SOURCE: NUL-terminated OpenCL C
};

struct LibraryTable {
    uint32_t abi_version;  // CHIP_ABI_VERSION of the headers the library was built with
    uint32_t entry_count;
    const LibraryEntry* entries;
};

static_assert(std::is_standard_layout_v<LibraryEntry> && sizeof(LibraryEntry) == 40);
static_assert(offsetof(LibraryEntry, kind) == 8 && offsetof(LibraryEntry, kernel) == 16);
static_assert(offsetof(LibraryEntry, orchestration) == 24 && offsetof(LibraryEntry, opencl_source) == 32);
static_assert(std::is_standard_layout_v<LibraryTable> && sizeof(LibraryTable) == 16);
static_assert(offsetof(LibraryTable, entry_count) == 4 && offsetof(LibraryTable, entries) == 8);

constexpr LibraryEntry kernel_entry(const char* name, KernelFn fn) noexcept {
    return LibraryEntry{name, LibraryEntryKind::KERNEL, fn, nullptr, nullptr};
}
constexpr LibraryEntry orchestration_entry(const char* name, OrchestrationFn fn) noexcept {
    return LibraryEntry{name, LibraryEntryKind::ORCHESTRATION, nullptr, fn, nullptr};
}
constexpr LibraryEntry opencl_source_entry(const char* origin, const char* source) noexcept {
    return LibraryEntry{origin, LibraryEntryKind::OPENCL_SOURCE, nullptr, nullptr, source};
}

using LibraryTableFn = const LibraryTable* (*)();

}  // namespace simpler::chip

#define SIMPLER_CHIP_LIBRARY_SYMBOL "simpler_chip_library"

// Exports `entries` (an array of simpler::chip::LibraryEntry) as this shared
// library's table.
#define SIMPLER_CHIP_EXPORT_LIBRARY(entries)                                                                        \
    extern "C" __attribute__((visibility("default"))) const ::simpler::chip::LibraryTable* simpler_chip_library() { \
        static const ::simpler::chip::LibraryTable table{                                                           \
            ::simpler::chip::CHIP_ABI_VERSION, static_cast<uint32_t>(sizeof(entries) / sizeof((entries)[0])),       \
            (entries)};                                                                                             \
        return &table;                                                                                              \
    }
