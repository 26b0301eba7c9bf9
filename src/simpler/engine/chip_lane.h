// ChipLane: what a chip child does with a task — the L2 consumer of the
// three-way split. It decodes the argument blob (TaskArgsView validates every
// tensor), materializes each tensor to a ChipTensor through the child's own
// ImportRegistry (Endpoint::chip(i): map-once by identity; a DEVICE backing
// resolves only when its address lies in this chip's device heap, a VMM_WINDOW
// one only when its range lies in windows of domains this chip is a member of),
// rebuilds the staging tags from the call config's write mask (task_config.h: a
// written view comes back, any other view is only copied in), and runs the chip
// orchestration the callable id names on its Chip, staged, zero-copy or
// checked as the call config says (a checked run's error names the tensor's
// buffer identity).
//
// Built inside the chip child after fork (make_chip_lane_handler is called
// there by the Worker); it owns the Chip (arena, registry, core threads) and the
// registry. Trusts nothing in the task: a refused blob or descriptor is
// BAD_ARGUMENTS, an unknown callable id UNKNOWN_CALLABLE, a failed run
// TASK_FAILED, each with the chip's message; the lane keeps serving. When the
// chip itself cannot be built (a library fails to load in the child), every
// task fails with that reason rather than the child dying silently.
//
// A chip callable registered after the chip started arrives as an install
// message (child_handlers.h) carrying a ChipInstall (chip_install.h):
// install() loads its library unless loaded, resolves its name as the next
// callable id, and returns why it could not (the id then names that failure).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/import_registry.h"
#include "simpler/chip/chip_service.h"
#include "simpler/engine/child_handlers.h"
#include "simpler/engine/import_log.h"
#include "simpler/ipc/serve_tasks.h"

namespace simpler {

class ChipFactsPage;
class DeviceMemory;
class WindowMemory;

struct ChipLaneConfig {
    chip::ChipServiceConfig chip;  // arena, core threads, staging, libraries, callable id -> orchestration name
    const DeviceMemory* device_memory = nullptr;  // the Worker's pre-fork heaps (ranges only)
    const WindowMemory* window_memory = nullptr;  // the Worker's shared window heaps (ranges only)
    // A level-3 Worker under a level 4: the L4's global window heaps, and this chip's member slot there.
    const WindowMemory* global_window_memory = nullptr;
    uint32_t global_window_slot = 0;
    // Where the chip child tells the Worker what device it opened, or why none
    // (chip_facts_page.h); null: nobody asks.
    ChipFactsPage* facts = nullptr;

    bool operator==(const ChipLaneConfig&) const = default;
};

class ChipLane {
public:
    // Builds the chip (ChipService: libraries loaded, names resolved); throws
    // what it throws.
    ChipLane(uint32_t chip_index, const ChipLaneConfig& config);

    ipc::TaskOutcome run(const ipc::TaskView& task) noexcept;
    // The owner freed these backings: drops them from this chip's import cache
    // (ImportRegistry::forget), so a late descriptor of them is refused here.
    void forget(std::span<const CanonicalIdentity> identities) noexcept;
    // Installs callable `callable` from a ChipInstall payload; returns why it
    // could not (empty: installed), which the parent prefixes with this child's name.
    std::string install(uint64_t callable, std::span<const std::byte> payload) noexcept;

    [[nodiscard]] chip::ChipService& chip() noexcept { return chip_; }
    [[nodiscard]] const ImportRegistry& registry() const noexcept { return registry_; }

private:
    ipc::TaskOutcome materialize(const ipc::TaskView& task) noexcept;

    uint32_t index_;
    const DeviceMemory* device_memory_;
    chip::ChipService chip_;
    DeviceOwnerTable device_owners_;
    ImportRegistry registry_;
    ImportLog log_;
    std::unique_ptr<ChipStorageTaskArgs> args_;
    std::vector<TensorArgType> tags_;
};

// What a Worker's chip child serves with (ChildHandlerFactory body): its
// tasks, the forgets for its import cache, and the installs of late callables.
// Publishes the device it opened (or why it could not) to config.facts first.
ChildHandlers make_chip_lane_child(uint32_t chip_index, const ChipLaneConfig& config);
// make_chip_lane_child(...).run.
ipc::TaskHandler make_chip_lane_handler(uint32_t chip_index, const ChipLaneConfig& config);

}  // namespace simpler
