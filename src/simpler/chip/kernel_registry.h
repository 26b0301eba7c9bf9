// KernelRegistry: the chip's kernels and chip orchestrations by name. Kernels
// get dense ids (what a task payload stores); orchestrations are looked up by
// name when a run starts. Libraries (LibraryTable) register all of their
// entries or none, and a loaded shared library stays open as long as the
// registry lives. A kernel has a C++ form (a function), an OpenCL form (a
// `__kernel` of an OpenCL C source whose text the registry keeps, for an
// OpenCL device to build: opencl_source()) or both, registered in either
// order under one name; a second form of the same kind is a duplicate. An
// OpenCL C source comes as a `*.cl` path (opencl_source.h) or as a library's
// OPENCL_SOURCE entry. A kernel with no C++ form, called on the simulated
// device, fails saying it runs on OpenCL chips only.
//
// Mutation (add_*, load_library) is not synchronized with runs: register
// before the first run or between runs. Lookups are const and thread-safe. Host
// layer: std::invalid_argument for a bad or duplicate name / entry,
// std::runtime_error when a shared library cannot be opened or has no table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "simpler/chip/library_abi.h"

namespace simpler::chip {

class SharedLibrary;

class KernelRegistry {
public:
    KernelRegistry();
    ~KernelRegistry();
    KernelRegistry(const KernelRegistry&) = delete;
    KernelRegistry& operator=(const KernelRegistry&) = delete;

    // Registers the C++ form of kernel `name`; returns its id.
    uint32_t add_kernel(const std::string& name, KernelFn fn);
    void add_orchestration(const std::string& name, OrchestrationFn fn);
    // Checks every entry (version, names, kinds, functions, no duplicate with
    // itself or the registry) before registering any. `origin` names the
    // library in error messages. Returns the ids of the kernels whose OpenCL
    // form it brought.
    std::vector<uint32_t> add_library(const LibraryTable& table, const std::string& origin);
    // dlopen()s `path`, reads its SIMPLER_CHIP_LIBRARY_SYMBOL table and
    // registers it; the library stays loaded for the registry's lifetime. A
    // `*.cl` path is read as OpenCL C instead (add_opencl_source). Returns the
    // ids of the kernels whose OpenCL form it brought.
    std::vector<uint32_t> load_library(const std::string& path);
    // Registers each `__kernel` of `source` as the OpenCL form of the kernel
    // of its name (all or none), keeping the text; `origin` names it in errors.
    // std::invalid_argument when it defines no kernel or a kernel whose OpenCL
    // form is already registered. Returns those kernels' ids.
    std::vector<uint32_t> add_opencl_source(const std::string& source, const std::string& origin);

    [[nodiscard]] bool find_kernel(const char* name, uint32_t* id) const noexcept;
    // The C++ form of kernel `id` (one that fails, naming OpenCL, when it has
    // an OpenCL form only); nullptr for an unknown id.
    [[nodiscard]] KernelFn kernel(uint32_t id) const noexcept;
    // The OpenCL C source of kernel `id`'s OpenCL form; nullptr when it has none or for an unknown id.
    struct OpenClSource {
        std::string origin;
        std::string text;
    };
    [[nodiscard]] const OpenClSource* opencl_source(uint32_t id) const noexcept;
    // The names of the kernels with an OpenCL form, in registration order.
    [[nodiscard]] std::vector<std::string> opencl_kernel_names() const;
    [[nodiscard]] const char* kernel_name(uint32_t id) const noexcept;
    [[nodiscard]] uint32_t kernel_count() const noexcept { return static_cast<uint32_t>(kernels_.size()); }
    [[nodiscard]] OrchestrationFn orchestration(const std::string& name) const noexcept;
    // The name `fn` is registered under (empty when none; one of them when several).
    [[nodiscard]] std::string orchestration_name(OrchestrationFn fn) const;
    [[nodiscard]] std::vector<std::string> kernel_names() const;
    // The orchestrations' names, then "opencl:<kernel>" for each kernel with an OpenCL form (a callable of its
    // own).
    [[nodiscard]] std::vector<std::string> orchestration_names() const;

private:
    struct Kernel {
        std::string name;
        KernelFn fn;                 // the C++ form; nullptr: none
        int32_t opencl_source = -1;  // the OpenCL form: index into opencl_sources_; -1: none
    };
    // The id of kernel `name`, a new one with no form when it has none yet.
    uint32_t kernel_slot(const std::string& name);
    [[nodiscard]] bool has_cpp_form(const std::string& name) const;
    [[nodiscard]] bool has_opencl_form(const std::string& name) const;
    // The kernel names `source` defines; std::invalid_argument (prefixed by
    // `what`) when none, or one already has an OpenCL form or is in `seen`.
    std::vector<std::string> check_opencl_source(const std::string& source, const std::string& what,
                                                 std::unordered_set<std::string>& seen) const;
    std::vector<std::unique_ptr<OpenClSource>> opencl_sources_;
    std::vector<Kernel> kernels_;
    std::unordered_map<std::string, uint32_t> kernel_ids_;
    std::unordered_map<std::string, OrchestrationFn> orchestrations_;
    std::vector<std::unique_ptr<SharedLibrary>> libraries_;
};

// Registers the standard set (std_kernels.cpp, std_orchestrations.cpp).
void register_standard_library(KernelRegistry& registry);

}  // namespace simpler::chip
