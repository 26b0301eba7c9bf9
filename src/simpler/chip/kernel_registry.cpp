#include "simpler/chip/kernel_registry.h"

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unordered_set>

#include "simpler/chip/opencl_source.h"
#include "simpler/chip/shared_library.h"
#include "simpler/chip/std_kernels.h"
#include "simpler/chip/std_orchestrations.h"

namespace simpler::chip {

KernelRegistry::KernelRegistry() = default;
KernelRegistry::~KernelRegistry() = default;

uint32_t KernelRegistry::add_kernel(const std::string& name, KernelFn fn) {
    if (name.empty()) throw std::invalid_argument("KernelRegistry: kernel name must not be empty");
    if (fn == nullptr) throw std::invalid_argument("KernelRegistry: kernel '" + name + "' has no function");
    if (has_cpp_form(name)) throw std::invalid_argument("KernelRegistry: kernel '" + name + "' already registered");
    const uint32_t id = kernel_slot(name);
    kernels_[id].fn = fn;
    return id;
}

uint32_t KernelRegistry::kernel_slot(const std::string& name) {
    if (auto it = kernel_ids_.find(name); it != kernel_ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(kernels_.size());
    kernels_.push_back(Kernel{name, nullptr});
    kernel_ids_.emplace(name, id);
    return id;
}

bool KernelRegistry::has_cpp_form(const std::string& name) const {
    auto it = kernel_ids_.find(name);
    return it != kernel_ids_.end() && kernels_[it->second].fn != nullptr;
}

bool KernelRegistry::has_opencl_form(const std::string& name) const {
    auto it = kernel_ids_.find(name);
    return it != kernel_ids_.end() && kernels_[it->second].opencl_source >= 0;
}

void KernelRegistry::add_orchestration(const std::string& name, OrchestrationFn fn) {
    if (name.empty()) throw std::invalid_argument("KernelRegistry: orchestration name must not be empty");
    if (fn == nullptr) throw std::invalid_argument("KernelRegistry: orchestration '" + name + "' has no function");
    if (orchestrations_.count(name) != 0)
        throw std::invalid_argument("KernelRegistry: orchestration '" + name + "' already registered");
    orchestrations_.emplace(name, fn);
}

std::vector<uint32_t> KernelRegistry::add_library(const LibraryTable& table, const std::string& origin) {
    const std::string where = "chip library " + origin + ": ";
    if (table.abi_version != CHIP_ABI_VERSION)
        throw std::invalid_argument(where + "built for chip ABI " + std::to_string(table.abi_version) +
                                    ", this runtime is " + std::to_string(CHIP_ABI_VERSION));
    if (table.entry_count > 0 && table.entries == nullptr) throw std::invalid_argument(where + "entries is null");
    std::unordered_set<std::string> kernels, orchs, opencl_kernels;
    for (uint32_t i = 0; i < table.entry_count; ++i) {
        const LibraryEntry& e = table.entries[i];
        const std::string at = where + "entry " + std::to_string(i) + ": ";
        if (e.name == nullptr || e.name[0] == '\0') throw std::invalid_argument(at + "name is empty");
        const std::string name = e.name;
        if (e.kind == LibraryEntryKind::KERNEL) {
            if (e.kernel == nullptr) throw std::invalid_argument(at + "kernel '" + name + "' has no function");
            if (has_cpp_form(name) || !kernels.insert(name).second)
                throw std::invalid_argument(at + "kernel '" + name + "' already registered");
        } else if (e.kind == LibraryEntryKind::ORCHESTRATION) {
            if (e.orchestration == nullptr)
                throw std::invalid_argument(at + "orchestration '" + name + "' has no function");
            if (orchestrations_.count(name) != 0 || !orchs.insert(name).second)
                throw std::invalid_argument(at + "orchestration '" + name + "' already registered");
        } else if (e.kind == LibraryEntryKind::OPENCL_SOURCE) {
            if (e.opencl_source == nullptr)
                throw std::invalid_argument(at + "OpenCL source '" + name + "' has no text");
            check_opencl_source(e.opencl_source, at + "OpenCL source '" + name + "'", opencl_kernels);
        } else {
            throw std::invalid_argument(at + "unknown kind " + std::to_string(static_cast<uint32_t>(e.kind)));
        }
    }
    std::vector<uint32_t> opencl_forms;
    for (uint32_t i = 0; i < table.entry_count; ++i) {
        const LibraryEntry& e = table.entries[i];
        if (e.kind == LibraryEntryKind::KERNEL) {
            add_kernel(e.name, e.kernel);
        } else if (e.kind == LibraryEntryKind::ORCHESTRATION) {
            add_orchestration(e.name, e.orchestration);
        } else {
            const std::vector<uint32_t> ids = add_opencl_source(e.opencl_source, origin + " (" + e.name + ")");
            opencl_forms.insert(opencl_forms.end(), ids.begin(), ids.end());
        }
    }
    return opencl_forms;
}

std::vector<std::string> KernelRegistry::check_opencl_source(const std::string& source, const std::string& what,
                                                             std::unordered_set<std::string>& seen) const {
    std::vector<std::string> names = ::simpler::chip::opencl_kernel_names(source);
    if (names.empty()) throw std::invalid_argument(what + ": no __kernel function in it");
    for (const std::string& n : names)
        if (has_opencl_form(n) || !seen.insert(n).second)
            throw std::invalid_argument(what + ": the OpenCL form of kernel '" + n + "' is already registered");
    return names;
}

namespace {

// What a kernel with an OpenCL form only is on a device that runs C++ kernels.
int32_t opencl_only(const KernelArgs* a) {
    return kernel_fail(a,
                       "it is OpenCL C, which runs on OpenCL chips only (Worker(device=\"opencl\")); this chip "
                       "drives the simulated device");
}

}  // namespace

std::vector<uint32_t> KernelRegistry::add_opencl_source(const std::string& source, const std::string& origin) {
    std::unordered_set<std::string> seen;
    const std::vector<std::string> names = check_opencl_source(source, "OpenCL source " + origin, seen);
    opencl_sources_.push_back(std::make_unique<OpenClSource>(OpenClSource{origin, source}));
    std::vector<uint32_t> ids;
    for (const std::string& n : names) {
        ids.push_back(kernel_slot(n));
        kernels_[ids.back()].opencl_source = static_cast<int32_t>(opencl_sources_.size() - 1);
    }
    return ids;
}

const KernelRegistry::OpenClSource* KernelRegistry::opencl_source(uint32_t id) const noexcept {
    if (id >= kernels_.size() || kernels_[id].opencl_source < 0) return nullptr;
    return opencl_sources_[static_cast<size_t>(kernels_[id].opencl_source)].get();
}

std::vector<std::string> KernelRegistry::opencl_kernel_names() const {
    std::vector<std::string> out;
    for (const Kernel& k : kernels_)
        if (k.opencl_source >= 0) out.push_back(k.name);
    return out;
}

std::vector<uint32_t> KernelRegistry::load_library(const std::string& path) {
    if (is_opencl_source_path(path)) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error("OpenCL source " + path + ": cannot be read");
        return add_opencl_source(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
                                 path);
    }
    auto lib = std::make_unique<SharedLibrary>(path);
    std::vector<uint32_t> opencl_forms = add_library(lib->table(), path);
    libraries_.push_back(std::move(lib));
    return opencl_forms;
}

bool KernelRegistry::find_kernel(const char* name, uint32_t* id) const noexcept {
    if (name == nullptr) return false;
    try {
        auto it = kernel_ids_.find(name);
        if (it == kernel_ids_.end()) return false;
        *id = it->second;
        return true;
    } catch (...) {
        return false;  // std::string construction failed (out of memory)
    }
}

KernelFn KernelRegistry::kernel(uint32_t id) const noexcept {
    if (id >= kernels_.size()) return nullptr;
    return kernels_[id].fn != nullptr ? kernels_[id].fn : opencl_only;
}

const char* KernelRegistry::kernel_name(uint32_t id) const noexcept {
    return id < kernels_.size() ? kernels_[id].name.c_str() : "<unknown kernel>";
}

OrchestrationFn KernelRegistry::orchestration(const std::string& name) const noexcept {
    auto it = orchestrations_.find(name);
    return it == orchestrations_.end() ? nullptr : it->second;
}

std::string KernelRegistry::orchestration_name(OrchestrationFn fn) const {
    for (const auto& [name, f] : orchestrations_)
        if (f == fn) return name;
    return {};
}

std::vector<std::string> KernelRegistry::kernel_names() const {
    std::vector<std::string> out;
    for (const Kernel& k : kernels_) out.push_back(k.name);
    return out;
}

std::vector<std::string> KernelRegistry::orchestration_names() const {
    std::vector<std::string> out;
    for (const auto& [name, fn] : orchestrations_) out.push_back(name);
    for (const Kernel& k : kernels_)
        if (k.opencl_source >= 0) out.push_back(std::string(OPENCL_CALLABLE_PREFIX) + k.name);
    return out;
}

void register_standard_library(KernelRegistry& registry) {
    registry.add_library(standard_kernel_table(), "<standard kernels>");
    registry.add_library(standard_orchestration_table(), "<standard orchestrations>");
}

}  // namespace simpler::chip
