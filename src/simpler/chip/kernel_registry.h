// KernelRegistry: the chip's kernels and chip orchestrations by name. Kernels
// get dense ids (what a task payload stores); orchestrations are looked up by
// name when a run starts. Libraries (LibraryTable) register all of their
// entries or none, and a loaded shared library stays open as long as the
// registry lives.
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
    // registers it; the library stays loaded for the registry's lifetime.
    void load_library(const std::string& path);

    [[nodiscard]] bool find_kernel(const char* name, uint32_t* id) const noexcept;
    [[nodiscard]] KernelFn kernel(uint32_t id) const noexcept;  // nullptr for an unknown id
    [[nodiscard]] const char* kernel_name(uint32_t id) const noexcept;
    [[nodiscard]] uint32_t kernel_count() const noexcept { return static_cast<uint32_t>(kernels_.size()); }
    [[nodiscard]] OrchestrationFn orchestration(const std::string& name) const noexcept;
    // The name `fn` is registered under (empty when none; one of them when several).
    [[nodiscard]] std::string orchestration_name(OrchestrationFn fn) const;
    [[nodiscard]] std::vector<std::string> kernel_names() const;
    [[nodiscard]] std::vector<std::string> orchestration_names() const;

private:
    struct Kernel {
        std::string name;
        KernelFn fn;
    };
    std::vector<Kernel> kernels_;
    std::unordered_map<std::string, uint32_t> kernel_ids_;
    std::unordered_map<std::string, OrchestrationFn> orchestrations_;
    std::vector<std::unique_ptr<SharedLibrary>> libraries_;
};

// Registers the standard set (std_kernels.cpp, std_orchestrations.cpp).
void register_standard_library(KernelRegistry& registry);

}  // namespace simpler::chip
