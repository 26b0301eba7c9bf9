// KernelRegistry: the chip's kernels and chip orchestrations by name. Kernels
// get dense ids (what a task payload stores); orchestrations are looked up by
// name when a run starts. Libraries (LibraryTable) register all of their
// entries or none, and a loaded shared library stays open as long as the
// registry lives. An OpenCL C source (a `*.cl` path, opencl_source.h) loads
// as a library too: each of its `__kernel` functions becomes a kernel whose
// source the registry keeps (opencl_source()), for an OpenCL device to build;
// called as a C++ kernel it fails saying it runs on OpenCL chips only.
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

    // Returns the new kernel's id.
    uint32_t add_kernel(const std::string& name, KernelFn fn);
    void add_orchestration(const std::string& name, OrchestrationFn fn);
    // Checks every entry (version, names, kinds, functions, no duplicate with
    // itself or the registry) before registering any. `origin` names the
    // library in error messages.
    void add_library(const LibraryTable& table, const std::string& origin);
    // dlopen()s `path`, reads its SIMPLER_CHIP_LIBRARY_SYMBOL table and
    // registers it; the library stays loaded for the registry's lifetime. A
    // `*.cl` path is read as OpenCL C instead (add_opencl_source).
    void load_library(const std::string& path);
    // Registers each `__kernel` of `source` (all or none), keeping the text;
    // `origin` names it in errors. std::invalid_argument when it defines no
    // kernel or a name already registered.
    void add_opencl_source(const std::string& source, const std::string& origin);

    [[nodiscard]] bool find_kernel(const char* name, uint32_t* id) const noexcept;
    [[nodiscard]] KernelFn kernel(uint32_t id) const noexcept;  // nullptr for an unknown id
    // The OpenCL C source kernel `id` was registered from; nullptr for a C++ kernel or an unknown id.
    struct OpenClSource {
        std::string origin;
        std::string text;
    };
    [[nodiscard]] const OpenClSource* opencl_source(uint32_t id) const noexcept;
    // The names of the OpenCL C kernels, in registration order.
    [[nodiscard]] std::vector<std::string> opencl_kernel_names() const;
    [[nodiscard]] const char* kernel_name(uint32_t id) const noexcept;
    [[nodiscard]] uint32_t kernel_count() const noexcept { return static_cast<uint32_t>(kernels_.size()); }
    [[nodiscard]] OrchestrationFn orchestration(const std::string& name) const noexcept;
    // The name `fn` is registered under (empty when none; one of them when several).
    [[nodiscard]] std::string orchestration_name(OrchestrationFn fn) const;
    [[nodiscard]] std::vector<std::string> kernel_names() const;
    // The orchestrations' names, then "opencl:<kernel>" for each OpenCL C kernel (a callable of its own).
    [[nodiscard]] std::vector<std::string> orchestration_names() const;

private:
    struct Kernel {
        std::string name;
        KernelFn fn;
        int32_t opencl_source = -1;  // index into opencl_sources_; -1: a C++ kernel
    };
    std::vector<std::unique_ptr<OpenClSource>> opencl_sources_;
    std::vector<Kernel> kernels_;
    std::unordered_map<std::string, uint32_t> kernel_ids_;
    std::unordered_map<std::string, OrchestrationFn> orchestrations_;
    std::vector<std::unique_ptr<SharedLibrary>> libraries_;
};

// Registers the standard set (std_kernels.cpp, std_orchestrations.cpp).
void register_standard_library(KernelRegistry& registry);

}  // namespace simpler::chip
