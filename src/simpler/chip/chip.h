// Chip: one chip, the in-process API the chip child process drives — its
// kernel / orchestration registry (the standard set preloaded), its device
// (device.h: the simulated device, simulated_device.h, or an OpenCL one,
// opencl/opencl_device.h, as ChipConfig::device chooses) and its runtime
// with its core threads. run() stages host-space arguments into device memory
// (unless the run is zero-copy), runs a chip
// orchestration to completion, copies written views back, and frees the staged
// copies. A checked run (StagingMode::CHECKED) fails instead of copying back
// when a staged byte outside the written views changed.
//
// Owns all three parts; members are built in dependency order (registry and
// device before the runtime that borrows them). Register libraries before the
// first run or between runs. run() is noexcept: every failure — bad arguments, arena
// exhaustion, an unknown orchestration, a kernel error — comes back as a
// RunResult with a message, and the chip stays usable for the next run. A
// failed run leaves host outputs as they were.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "simpler/chip/chip_runtime.h"
#include "simpler/chip/device.h"
#include "simpler/chip/device_arena.h"
#include "simpler/chip/kernel_registry.h"
#include "simpler/chip/staging.h"

namespace simpler::chip {

struct ChipConfig {
    uint64_t arena_bytes = DEVICE_ARENA_DEFAULT_BYTES;  // the device's memory
    // The simulated device's memory is reachable from the chip process; false:
    // it behaves as a discrete device's (bytes move only by device copies).
    bool host_addressable = true;
    RuntimeConfig runtime;
    StagingMode staging = StagingMode::STAGE;
    bool standard_library = true;  // register the standard kernels and orchestrations
    DeviceChoice device{};         // which device the chip drives
};

class Chip {
public:
    // Throws what the device and Runtime throw for a bad config, and
    // std::runtime_error naming what is missing when the device cannot be
    // opened (no OpenCL loader, platform or device; a build without OpenCL).
    explicit Chip(const ChipConfig& config = {});

    [[nodiscard]] Device& device() noexcept { return *device_; }
    [[nodiscard]] KernelRegistry& registry() noexcept { return registry_; }
    [[nodiscard]] Runtime& runtime() noexcept { return runtime_; }
    [[nodiscard]] const ChipConfig& config() const noexcept { return config_; }

    // Runs the orchestration registered as `orchestration` on `args`; `tags`
    // holds one tag per tensor (they drive staging).
    RunResult run(const std::string& orchestration, const ChipStorageTaskArgs& args,
                  std::span<const TensorArgType> tags) noexcept;
    RunResult run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args,
                  std::span<const TensorArgType> tags) noexcept;
    // One run with its own staging mode and core-count hint (Runtime::run).
    // A checked run's error names the orchestration and the tensor (`describe`
    // names it; StagedArgs::violation).
    RunResult run(OrchestrationFn orchestration, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                  StagingMode staging, uint32_t block_dim, const TensorDescriber& describe = {}) noexcept;

    // One task of kernel `kernel_id` on every argument (tags[i] for tensor i),
    // staged as run() stages: a callable that is one kernel (opencl_source.h).
    RunResult run_kernel(uint32_t kernel_id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                         StagingMode staging, const TensorDescriber& describe = {}) noexcept;

private:
    // Stages `args`, runs `run(device_args)`, checks (CHECKED) and copies back;
    // `name()` names the run in a checked run's error.
    template <class Name, class Run>
    RunResult staged_run(const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags, StagingMode staging,
                         const TensorDescriber& describe, Name&& name, Run&& run) noexcept;

    ChipConfig config_;
    KernelRegistry registry_;
    std::unique_ptr<Device> device_;
    Runtime runtime_;
};

}  // namespace simpler::chip
