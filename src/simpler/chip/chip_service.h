// ChipService: a Chip behind a narrow door, for code that also sees the L3+
// wire types. The kernel-facing headers (tensor.h) name the chip runtime's
// tensor `Tensor` globally, as kernels expect, so they cannot share a
// translation unit with buffer.h's wire `Tensor`; this header reaches neither
// and keeps the Chip behind a pointer to implementation.
//
// It builds a Chip, loads the given shared libraries, resolves the given chip
// orchestration names to dense ids once, and runs by id. Owns the Chip. Host
// layer: the constructor throws what Chip / KernelRegistry throw, and
// std::invalid_argument for an orchestration name nothing registered; run() is
// noexcept and reports every failure (an id out of range included) as data.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simpler/chip/device_arena.h"
#include "simpler/chip/runtime_config.h"
#include "simpler/chip/staging.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler::chip {

class Chip;
struct OrchestrationContext;

// The chip's options; every default is here, and validate() checks what can
// be checked before a child builds the chip (the libraries and names are
// checked when the ChipService loads them).
struct ChipServiceConfig {
    uint64_t arena_bytes = DEVICE_ARENA_DEFAULT_BYTES;  // staging copies and run temporaries
    RuntimeConfig runtime;                               // core threads, ring slots
    StagingMode staging = StagingMode::STAGE;            // a run may still ask for ZERO_COPY
    std::vector<std::string> libraries;                  // loaded in order
    std::vector<std::string> orchestrations;             // id -> name

    bool operator==(const ChipServiceConfig&) const = default;
    // Throws std::invalid_argument naming the field (validate_arena_capacity,
    // validate_runtime_config).
    void validate() const;
};

struct ChipServiceResult {
    bool ok = true;
    std::string error;
};

class ChipService {
public:
    explicit ChipService(const ChipServiceConfig& config);
    ~ChipService();
    ChipService(const ChipService&) = delete;
    ChipService& operator=(const ChipService&) = delete;

    // Runs orchestration `id` on `args` (one tag per tensor drives staging);
    // `zero_copy` overrides the configured staging for this run; block_dim > 0
    // caps the core count the orchestration tiles for.
    ChipServiceResult run(uint64_t id, const ChipStorageTaskArgs& args, std::span<const TensorArgType> tags,
                          bool zero_copy, uint32_t block_dim) noexcept;

    [[nodiscard]] size_t orchestration_count() const noexcept { return orchestrations_.size(); }
    [[nodiscard]] Chip& chip() noexcept { return *chip_; }

private:
    std::unique_ptr<Chip> chip_;
    std::vector<int32_t (*)(const OrchestrationContext*)> orchestrations_;
    StagingMode staging_;
};

}  // namespace simpler::chip
