// ChipService: a Chip as a chip child's lane drives it — built from one small
// config, with the given shared libraries loaded and the given chip
// orchestration names resolved to dense ids once, then run by id.
//
// A callable is a chip orchestration by name, or "opencl:<kernel>": one
// OpenCL C kernel of a loaded `*.cl` source (opencl_source.h) run on the
// task's arguments with their tags; it is built on the chip's device when
// installed: one that does not build is not installed (install() throws the
// build log; one named in the config fails its runs with it). The OpenCL
// forms a library brings (library_abi.h) are built when it loads: at install
// one that does not build refuses the install; loaded from the config, it
// fails each task that launches it, with the build log.
//
// A callable registered after the chip started is installed between runs
// (install(): its library loaded unless it already is, its name resolved to
// the next id); an install that failed leaves its id naming that failure.
//
// Owns the Chip. Host layer: the constructor and install() throw what Chip /
// KernelRegistry throw, and std::invalid_argument for an orchestration name
// nothing registered; run() is noexcept and reports every failure (an id out
// of range or not installed included) as data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simpler/chip/chip.h"
#include "simpler/chip/device.h"
#include "simpler/chip/device_arena.h"
#include "simpler/chip/runtime_config.h"
#include "simpler/chip/staging.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

// The chip's options; every default is here, and validate() checks what can
// be checked before a child builds the chip (the libraries and names are
// checked when the ChipService loads them).
struct ChipServiceConfig {
    uint64_t arena_bytes = DEVICE_ARENA_DEFAULT_BYTES;  // staging copies and run temporaries
    RuntimeConfig runtime;                               // core threads, ring slots
    StagingMode staging = StagingMode::STAGE;            // a run may still ask for ZERO_COPY or CHECKED
    std::vector<std::string> libraries;                  // loaded in order
    std::vector<std::string> orchestrations;             // id -> name
    DeviceChoice device{};                               // which device (a Worker sets index to the chip's)

    bool operator==(const ChipServiceConfig&) const = default;

    // Throws std::invalid_argument naming this struct's field ("arena_bytes: ...",
    // "runtime.core_threads: ...", "device.kind: ...").
    void validate() const;
};

struct ChipServiceResult {
    bool ok = true;
    std::string error;
};

class ChipService {
public:
    explicit ChipService(const ChipServiceConfig& config);
    ChipService(const ChipService&) = delete;
    ChipService& operator=(const ChipService&) = delete;

    // Runs orchestration `id` on `args` (one tag per tensor drives staging) as
    // `call` asks: a nonzero `checked` runs it CHECKED, else a nonzero
    // `zero_copy` ZERO_COPY, else with the configured staging; block_dim > 0
    // caps the core count the orchestration tiles for. `describe` names a
    // tensor in a checked run's error.
    ChipServiceResult run(uint64_t id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                          const CallConfig& call, const TensorDescriber& describe = {}) noexcept;
    // The staging a run with `call` gets (see run()).
    [[nodiscard]] StagingMode staging_for(const CallConfig& call) const noexcept;

    // Installs chip orchestration `name` as callable `id` (the next id:
    // orchestration_count()), loading `library` first unless it is loaded
    // (empty: the standard set). Call it between runs. Throws
    // std::invalid_argument for another id, an unknown name or a library
    // whose entries collide with loaded ones, std::runtime_error when the
    // library cannot be opened; the id is then taken by the failure
    // (install_failed).
    void install(uint64_t id, const std::string& name, const std::string& library);
    // Marks callable `id` (the next id) as not installed, for `why`: a run of it fails saying so.
    void install_failed(uint64_t id, const std::string& why);

    [[nodiscard]] size_t orchestration_count() const noexcept { return callables_.size(); }
    [[nodiscard]] Chip& chip() noexcept { return chip_; }

private:
    static constexpr uint32_t NO_KERNEL = UINT32_MAX;
    // A callable: a chip orchestration, or one kernel run on the task's
    // arguments ("opencl:<kernel>", opencl_source.h); neither: an install that failed.
    struct Callable {
        OrchestrationFn fn;
        uint32_t kernel;
    };
    // The callable `name` names; std::invalid_argument "no ... named '<name>' <where>".
    Callable resolve(const std::string& name, const std::string& where);
    // Readies one-kernel callable `id` on the device (an OpenCL build); a
    // failure marks it not installed, with the whole reason.
    void prepare_or_mark(size_t id, const std::string& name);
    // Readies kernel `kernel` on the device; a failure is left for its launches to report.
    void try_prepare(uint32_t kernel) noexcept;

    Chip chip_;
    std::vector<Callable> callables_;               // by id
    std::vector<std::string> not_installed_;        // by id: why (empty for an installed id)
    std::vector<std::string> libraries_;            // loaded, in order
    StagingMode staging_;
};

}  // namespace simpler::chip
