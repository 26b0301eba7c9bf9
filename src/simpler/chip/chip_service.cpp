#include "simpler/chip/chip_service.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "simpler/chip/opencl_source.h"
#include "simpler/task_interface/field_refusal.h"

namespace simpler::chip {
namespace {

ChipConfig chip_config(const ChipServiceConfig& config) {
    ChipConfig c;
    c.arena_bytes = config.arena_bytes;
    c.runtime = config.runtime;
    c.staging = config.staging;
    c.device = config.device;
    return c;
}

}  // namespace

void ChipServiceConfig::validate() const {
    validate_arena_capacity(arena_bytes, "arena_bytes");
    validate_runtime_config(runtime, "runtime.");
    if (device.kind > LAST_DEVICE_KIND)
        throw FieldRefusal("device.kind",
                           std::to_string(static_cast<int>(device.kind)) + " is not one of simulated, opencl, cuda");
}

ChipService::ChipService(const ChipServiceConfig& config) : chip_(chip_config(config)), staging_(config.staging) {
    for (const std::string& path : config.libraries) {
        const std::vector<uint32_t> opencl_forms = chip_.registry().load_library(path);
        libraries_.push_back(path);
        // Built now so that no task pays for the build; one that does not build
        // fails each task that launches it, with the build log.
        for (uint32_t k : opencl_forms) try_prepare(k);
    }
    for (const std::string& name : config.orchestrations) {
        callables_.push_back(resolve(name, "is registered"));
        not_installed_.emplace_back();
        prepare_or_mark(callables_.size() - 1, name);
    }
}

void ChipService::prepare_or_mark(size_t id, const std::string& name) {
    Callable& c = callables_[id];
    if (c.kernel == NO_KERNEL) return;
    try {
        chip_.device().prepare(c.kernel);
    } catch (const std::exception& e) {
        c = {nullptr, NO_KERNEL};
        not_installed_[id] = "'" + name + "': " + e.what();
    }
}

void ChipService::try_prepare(uint32_t kernel) noexcept {
    try {
        chip_.device().prepare(kernel);
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the launch reports it
    }
}

ChipService::Callable ChipService::resolve(const std::string& name, const std::string& where) {
    const KernelRegistry& r = chip_.registry();
    if (name.starts_with(OPENCL_CALLABLE_PREFIX)) {
        const std::string kernel = name.substr(OPENCL_CALLABLE_PREFIX.size());
        uint32_t id = 0;
        if (!r.find_kernel(kernel.c_str(), &id) || r.opencl_source(id) == nullptr)
            throw std::invalid_argument("no OpenCL kernel named '" + kernel + "' " + where);
        return {nullptr, id};
    }
    const OrchestrationFn fn = r.orchestration(name);
    if (fn == nullptr) throw std::invalid_argument("no chip orchestration named '" + name + "' " + where);
    return {fn, NO_KERNEL};
}

void ChipService::install(uint64_t id, const std::string& name, const std::string& library) {
    if (id != callables_.size())
        throw std::invalid_argument("chip callable " + std::to_string(id) + " is not the next id (" +
                                    std::to_string(callables_.size()) + ")");
    try {
        if (!library.empty() && std::find(libraries_.begin(), libraries_.end(), library) == libraries_.end()) {
            const std::vector<uint32_t> opencl_forms = chip_.registry().load_library(library);
            libraries_.push_back(library);
            for (uint32_t k : opencl_forms) chip_.device().prepare(k);  // throws: not installed, with the build log
        }
        Callable c = resolve(name, "in " + (library.empty() ? std::string("the standard set") : "library " + library));
        if (c.kernel != NO_KERNEL) chip_.device().prepare(c.kernel);  // throws: not installed, with the build log
        callables_.push_back(c);
        not_installed_.emplace_back();
    } catch (const std::exception& e) {
        install_failed(id, e.what());
        throw;
    }
}

void ChipService::install_failed(uint64_t id, const std::string& why) {
    if (id != callables_.size()) return;  // not the next id: nothing to mark
    callables_.push_back({nullptr, NO_KERNEL});
    not_installed_.push_back(why.empty() ? std::string("not installed") : why);
}

StagingMode ChipService::staging_for(const CallConfig& call) const noexcept {
    if (call.checked != 0) return StagingMode::CHECKED;
    return call.zero_copy != 0 ? StagingMode::ZERO_COPY : staging_;
}

ChipServiceResult ChipService::run(uint64_t id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                                   const CallConfig& call, const TensorDescriber& describe) noexcept {
    if (id >= callables_.size())
        return {false, "no chip callable " + std::to_string(id) + " (this chip has " +
                           std::to_string(callables_.size()) + ")"};
    const Callable& c = callables_[id];
    if (c.fn == nullptr && c.kernel == NO_KERNEL)
        return {false,
                "chip callable " + std::to_string(id) + " was not installed on this chip: " + not_installed_[id]};
    RunResult r = c.fn != nullptr ? chip_.run(c.fn, args, tags, staging_for(call), call.block_dim, describe)
                                  : chip_.run_kernel(c.kernel, args, tags, staging_for(call), describe);
    return {r.ok, std::move(r.error)};
}

}  // namespace simpler::chip
