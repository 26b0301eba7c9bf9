#include "simpler/engine/chip_lane.h"

#include <exception>
#include <stdexcept>

#include "simpler/engine/chip_facts_page.h"
#include "simpler/engine/chip_install.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/window_memory.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler {

namespace {

ImportRefusal refusal_of(WindowAccess a) noexcept {
    switch (a) {
        case WindowAccess::MEMBER: return ImportRefusal::NONE;
        case WindowAccess::NOT_MEMBER: return ImportRefusal::WINDOW_NOT_MEMBER;
        case WindowAccess::OUTSIDE: break;
    }
    return ImportRefusal::WINDOW_OUTSIDE;
}

// The registry's window test for chip `chip`: the Worker's membership table,
// then the global windows' (as member slot `slot`), or none.
std::function<ImportRefusal(uint64_t, uint64_t)> window_access(const ChipLaneConfig& config, uint32_t chip) {
    const WindowMemory* windows = config.window_memory;
    const WindowMemory* global = config.global_window_memory;
    if (windows == nullptr && global == nullptr) return {};
    return [windows, global, chip, slot = config.global_window_slot](uint64_t addr, uint64_t nbytes) {
        if (global != nullptr && global->contains(addr, nbytes)) return refusal_of(global->access(slot, addr, nbytes));
        if (windows == nullptr) return ImportRefusal::WINDOW_OUTSIDE;
        return refusal_of(windows->access(chip, addr, nbytes));
    };
}

// The chip's options with its device chosen by its index (chip i drives device i modulo those found).
chip::ChipServiceConfig for_chip(chip::ChipServiceConfig config, uint32_t chip) {
    config.device.index = chip;
    return config;
}

}  // namespace

ChipLane::ChipLane(uint32_t chip_index, const ChipLaneConfig& config)
    : index_(chip_index),
      device_memory_(config.device_memory),
      chip_(for_chip(config.chip, chip_index)),
      registry_(ImportRegistryConfig{
          Endpoint::chip(chip_index), nullptr, nullptr, &device_owners_, window_access(config, chip_index), {}}),
      log_(chip_index),
      args_(std::make_unique<ChipStorageTaskArgs>()) {
    tags_.reserve(CHIP_MAX_TENSOR_ARGS);
    // The Worker's DEVICE_MALLOC heap of this chip holds its bytes on the chip's device.
    if (device_memory_ != nullptr && index_ < device_memory_->num_chips()) {
        const auto [base, nbytes] = device_memory_->heap_range(index_);
        chip_.chip().device().adopt_range(base, nbytes);
    }
}

ipc::TaskOutcome ChipLane::materialize(const ipc::TaskView& task) noexcept {
    TaskArgsView view;
    if (ValidationError e = TaskArgsView::open(task.blob.data(), task.blob.size(), view); !e.ok())
        return {ipc::TaskError::BAD_ARGUMENTS, "argument blob refused: " + e.message()};
    if (view.tensor_count() > CHIP_MAX_TENSOR_ARGS || view.scalar_count() > CHIP_MAX_SCALAR_ARGS)
        return {ipc::TaskError::BAD_ARGUMENTS, "a chip takes at most " + std::to_string(CHIP_MAX_TENSOR_ARGS) +
                                                   " tensors and " + std::to_string(CHIP_MAX_SCALAR_ARGS) + " scalars"};
    ChipStorageTaskArgs& out = *args_;
    out.clear();
    tags_.clear();
    const CallConfig config = call_config_from_bytes(task.config.bytes);
    try {
        Tensor t;
        for (int32_t i = 0; i < view.tensor_count(); ++i) {
            if (ValidationError e = view.tensor(i, t); !e.ok())
                return {ipc::TaskError::BAD_ARGUMENTS, "argument blob refused: " + e.message()};
            if (t.buffer.address_space == static_cast<uint8_t>(AddressSpace::DEVICE) &&
                t.buffer.backend_kind != static_cast<uint8_t>(BackendKind::VMM_WINDOW) && device_memory_ != nullptr) {
                // The heaps' ranges say whose device memory this is; the registry
                // then resolves it only when that is this chip.
                if (std::optional<uint32_t> owner =
                        device_memory_->chip_of_range(descriptor_address(t.buffer), t.buffer.nbytes))
                    device_owners_.record(t.buffer.identity, *owner);
            }
            // An argument the task does not write gets the read-only form of its
            // backing: a zero-copy kernel's store to it faults (grant_fault.h).
            const bool writes = writes_tensor(config, static_cast<size_t>(i));
            out.add_tensor(registry_.materialize(t, writes));
            tags_.push_back(writes ? TensorArgType::INOUT : TensorArgType::INPUT);
        }
        for (int32_t i = 0; i < view.scalar_count(); ++i) out.add_scalar(view.scalar(i));
    } catch (const std::exception& e) {
        return {ipc::TaskError::BAD_ARGUMENTS,
                std::string("argument refused on chip ") + std::to_string(index_) + ": " + e.what()};
    }
    return {};
}

ipc::TaskOutcome ChipLane::run(const ipc::TaskView& task) noexcept {
    if (task.callable_id >= chip_.orchestration_count())
        return {ipc::TaskError::UNKNOWN_CALLABLE,
                "chip " + std::to_string(index_) + " has no callable " + std::to_string(task.callable_id)};
    if (ipc::TaskOutcome refused = materialize(task); refused.error != ipc::TaskError::NONE) return refused;
    const CallConfig config = call_config_from_bytes(task.config.bytes);
    // A checked run's error names a tensor by its index and its buffer's identity.
    const chip::TensorDescriber describe = [&task](int32_t i) -> std::string {
        TaskArgsView view;
        Tensor t;
        if (!TaskArgsView::open(task.blob.data(), task.blob.size(), view).ok() || !view.tensor(i, t).ok()) return {};
        return "tensor " + std::to_string(i) + " (buffer " + t.buffer.identity.to_string() + ")";
    };
    chip::ChipServiceResult r = chip_.run(task.callable_id, *args_, tags_, config, describe);
    log_.record("task", registry_);
    if (!r.ok) return {ipc::TaskError::TASK_FAILED, r.error};
    return {};
}

void ChipLane::forget(std::span<const CanonicalIdentity> identities) noexcept {
    for (const CanonicalIdentity& id : identities) (void)registry_.forget(id);
    log_.record("forget", registry_);
}

std::string ChipLane::install(uint64_t callable, std::span<const std::byte> payload) noexcept {
    try {
        const ChipInstall what = decode_chip_install(payload);
        chip_.install(callable, what.orchestration, what.library);
        return {};
    } catch (const std::exception& e) {
        chip_.install_failed(callable, e.what());
        return e.what();  // the parent names the child it came from
    }
}

ChildHandlers make_chip_lane_child(uint32_t chip_index, const ChipLaneConfig& config) {
    std::shared_ptr<ChipLane> lane;
    std::string why;
    try {
        lane = std::make_shared<ChipLane>(chip_index, config);
    } catch (const std::exception& e) {
        why = std::string("chip ") + std::to_string(chip_index) + " could not start: " + e.what();
    }
    if (config.facts != nullptr) {
        if (lane) {
            config.facts->publish(lane->chip().chip().device().facts());
        } else {
            config.facts->publish_failure(why);
        }
    }
    if (!lane)
        return ChildHandlers{[why](const ipc::TaskView&) { return ipc::TaskOutcome{ipc::TaskError::TASK_FAILED, why}; },
                             {},
                             [why](uint64_t, std::span<const std::byte>) { return why; }};
    return ChildHandlers{
        [lane](const ipc::TaskView& task) { return lane->run(task); },
        [lane](std::span<const CanonicalIdentity> ids) { lane->forget(ids); },
        [lane](uint64_t callable, std::span<const std::byte> payload) { return lane->install(callable, payload); }};
}

ipc::TaskHandler make_chip_lane_handler(uint32_t chip_index, const ChipLaneConfig& config) {
    return make_chip_lane_child(chip_index, config).run;
}

}  // namespace simpler
