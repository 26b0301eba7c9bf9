#include "simpler/chip/chip_service.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

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
    if (device.kind != DeviceKind::SIMULATED && device.kind != DeviceKind::OPENCL)
        throw std::invalid_argument("device.kind: " + std::to_string(static_cast<int>(device.kind)) +
                                    " is not one of simulated, opencl");
}

ChipService::ChipService(const ChipServiceConfig& config) : chip_(chip_config(config)), staging_(config.staging) {
    for (const std::string& path : config.libraries) {
        chip_.registry().load_library(path);
        libraries_.push_back(path);
    }
    for (const std::string& name : config.orchestrations) {
        OrchestrationFn fn = chip_.registry().orchestration(name);
        if (fn == nullptr) throw std::invalid_argument("no chip orchestration named '" + name + "' is registered");
        orchestrations_.push_back(fn);
        not_installed_.emplace_back();
    }
}

void ChipService::install(uint64_t id, const std::string& name, const std::string& library) {
    if (id != orchestrations_.size())
        throw std::invalid_argument("chip callable " + std::to_string(id) + " is not the next id (" +
                                    std::to_string(orchestrations_.size()) + ")");
    try {
        if (!library.empty() && std::find(libraries_.begin(), libraries_.end(), library) == libraries_.end()) {
            chip_.registry().load_library(library);
            libraries_.push_back(library);
        }
        OrchestrationFn fn = chip_.registry().orchestration(name);
        if (fn == nullptr)
            throw std::invalid_argument("no chip orchestration named '" + name + "' in " +
                                        (library.empty() ? std::string("the standard set") : "library " + library));
        orchestrations_.push_back(fn);
        not_installed_.emplace_back();
    } catch (const std::exception& e) {
        install_failed(id, e.what());
        throw;
    }
}

void ChipService::install_failed(uint64_t id, const std::string& why) {
    if (id != orchestrations_.size()) return;  // not the next id: nothing to mark
    orchestrations_.push_back(nullptr);
    not_installed_.push_back(why.empty() ? std::string("not installed") : why);
}

StagingMode ChipService::staging_for(const CallConfig& call) const noexcept {
    if (call.checked != 0) return StagingMode::CHECKED;
    return call.zero_copy != 0 ? StagingMode::ZERO_COPY : staging_;
}

ChipServiceResult ChipService::run(uint64_t id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                                   const CallConfig& call, const TensorDescriber& describe) noexcept {
    if (id >= orchestrations_.size())
        return {false, "no chip callable " + std::to_string(id) + " (this chip has " +
                           std::to_string(orchestrations_.size()) + ")"};
    if (orchestrations_[id] == nullptr)
        return {false,
                "chip callable " + std::to_string(id) + " was not installed on this chip: " + not_installed_[id]};
    RunResult r = chip_.run(orchestrations_[id], args, tags, staging_for(call), call.block_dim, describe);
    return {r.ok, std::move(r.error)};
}

}  // namespace simpler::chip
