#include "simpler/chip/chip.h"

#include <exception>

#include "simpler/chip/device_catalog.h"

namespace simpler::chip {
namespace {

RunResult failed(std::string message) {
    RunResult r;
    r.ok = false;
    r.error = std::move(message);
    return r;
}

}  // namespace

Chip::Chip(const ChipConfig& config)
    : config_(config),
      registry_(),
      device_(open_device(
          config.device, registry_,
          SimulatedDeviceOptions{config.arena_bytes, config.host_addressable, config.runtime.core_threads})),
      runtime_(registry_, *device_, config.runtime) {
    if (config_.standard_library) register_standard_library(registry_);
}

RunResult Chip::run(const std::string& orchestration, const ChipStorageTaskArgs& args,
                    std::span<const TensorArgType> tags) noexcept {
    const OrchestrationFn fn = registry_.orchestration(orchestration);
    if (fn == nullptr) return failed("no chip orchestration named '" + orchestration + "' is registered");
    return run(fn, args, tags);
}

RunResult Chip::run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args,
                    std::span<const TensorArgType> tags) noexcept {
    return run(orchestration, args, tags, config_.staging, 0);
}

RunResult Chip::run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                    StagingMode staging, uint32_t block_dim, const TensorDescriber& describe) noexcept {
    return staged_run(
        args, tags, staging, describe, [&] { return registry_.orchestration_name(orchestration); },
        [&](const ChipStorageTaskArgs& device_args) { return runtime_.run(orchestration, device_args, block_dim); });
}

RunResult Chip::run_kernel(uint32_t kernel_id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                           StagingMode staging, const TensorDescriber& describe) noexcept {
    return staged_run(
        args, tags, staging, describe, [&] { return std::string(registry_.kernel_name(kernel_id)); },
        [&](const ChipStorageTaskArgs& device_args) { return runtime_.run_kernel(kernel_id, device_args, tags); });
}

template <class Name, class Run>
RunResult Chip::staged_run(const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags, StagingMode staging,
                           const TensorDescriber& describe, Name&& name, Run&& run) noexcept {
    try {
        StagedArgs staged = stage_in(args, tags, *device_, staging);
        RunResult result = run(staged.device_args());
        if (staging == StagingMode::CHECKED) {
            if (std::string v = staged.violation(describe); !v.empty()) {
                v = "checked run of '" + name() + "': " + v + "; nothing was copied back";
                result.error = result.ok ? std::move(v) : result.error + "; and " + v;
                result.ok = false;
            }
        }
        if (result.ok) staged.copy_back();
        return result;
    } catch (const std::exception& e) {
        return failed(std::string("chip run: ") + e.what());
    }
}

}  // namespace simpler::chip
