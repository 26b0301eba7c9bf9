// WorkerConfig: everything a Worker is built from (worker.h), its options
// with their defaults and the collaborators a Worker calls (the handlers each
// child's factory makes, the relays of remote children, the hooks the engine
// asks about identities). A value: validate() says what is out of range,
// same_options() compares two (the Python Worker's reuse of a config).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simpler/chip/device.h"
#include "simpler/engine/child_handlers.h"
#include "simpler/engine/chip_lane.h"
#include "simpler/engine/device_memory.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/trace_event.h"
#include "simpler/engine/window_memory.h"
#include "simpler/ipc/mailbox_frame.h"
#include "simpler/ipc/spin_wait.h"
#include "simpler/task_interface/identity.h"

namespace simpler {

// A submit that finds this many tasks of its Worker unfinished waits until a
// quarter of them finished (WorkerConfig::max_unfinished, Worker::await_room):
// a run streaming tasks faster than its children run them holds this many
// records (~700 bytes each, ~45 MiB) at most, not one per task it submitted. A
// task that waits for something its orchestration does only after submitting
// this many more would wait for ever: such a program raises the limit, or sets
// 0 for none.
inline constexpr uint64_t DEFAULT_MAX_UNFINISHED = 65536;

// Tasks a chip's lane holds at once: the one it runs and up to three behind it,
// chained or ready (EngineConfig::chip_lane_depth; docs/internals/ipc.md,
// MailboxRing). Each slot's blob area is reserved, not touched, until used.
inline constexpr uint32_t CHIP_LANE_DEPTH = 4;

// Everything a Worker is built from: its options (each default is the
// initializer here and nowhere else) and its collaborators (handlers, hooks).
// The Python Worker fills one from its keywords (python/simpler/worker.py).
struct WorkerConfig {
    uint32_t level = 3;  // 3: a host (chips below); 4 to 8: a pod (Workers below); names hops in failure reports
    uint32_t num_chips = 0;
    uint32_t num_sub_workers = 0;
    uint32_t num_workers = 0;  // next-level Worker children (an L4's L3s); a Worker has chips or Workers, not both
    size_t blob_capacity = ipc::DEFAULT_BLOB_CAPACITY;
    ipc::SpinPolicy spin{};                         // every waiter's; a fixed budget is at most MAX_SPIN
    std::chrono::milliseconds task_timeout{0};      // per task; 0: none
    std::chrono::milliseconds close_grace{2000};    // before close() SIGKILLs a child
    ChildHandlerFactory chip_handler;               // empty: each chip child serves a ChipLane built from chip_lane
    ChipLaneConfig chip_lane;                       // the simulated chips (used when chip_handler is empty)
    uint64_t device_memory_bytes = DEFAULT_DEVICE_HEAP_BYTES;  // per chip, for alloc_device
    uint64_t window_heap_bytes = DEFAULT_WINDOW_HEAP_BYTES;    // per chip, for allocate_domain's windows
    bool record_edges = false;                      // keep every inferred edge (take_edge_log)
    size_t edge_log_capacity = DEFAULT_EDGE_LOG_CAPACITY;  // edges kept until taken; later ones are counted
    uint64_t max_unfinished = DEFAULT_MAX_UNFINISHED;  // see DEFAULT_MAX_UNFINISHED; 0: no limit
    // A chip task whose producers are in flight on other chips goes to its chip at once and waits there
    // (EngineConfig::cross_chip, on the Worker's LaneBoard); its task_timeout counts from when they are
    // collected. False (the default until it beats the parent path on METG: docs/benchmarks/cross-lane.md):
    // it waits here until they complete.
    bool chip_conditions = false;
    [[nodiscard]] bool cross_chip() const noexcept { return chip_conditions && num_chips > 1; }
    std::vector<std::string> sub_callable_names;    // by callable id, for error messages (chips: chip_lane's)
    ChildHandlerFactory sub_handler;                // required when num_sub_workers > 0; likewise
    ChildHandlerFactory worker_handler;             // required when num_workers > 0: runs a next-level Worker
    std::vector<std::string> worker_callable_names; // by callable id: the next-level Workers' orchestrations
    // The last num_relay_workers of the num_workers children live on other
    // hosts: nothing is forked for them; init() calls relay_handler(index) here
    // after the forks, and a relay thread serves each one's lane (RelayLane).
    uint32_t num_relay_workers = 0;
    RelayLaneFactory relay_handler;                 // required when num_relay_workers > 0
    // Consulted after the Worker's own device memory and this process's minter (see EngineConfig).
    std::function<std::optional<uint32_t>(const CanonicalIdentity&)> device_owner;
    std::function<std::string(const CanonicalIdentity&)> identity_problem;
    bool trace = false;                              // record a TraceRecorder timeline (see trace.h)
    size_t trace_capacity = DEFAULT_TRACE_CAPACITY;  // events kept; later ones are counted as dropped
    // This Worker's place in its tree ("L4/L3[0]"): device memory of chip i
    // carries the owner path "<path>/chip i". Empty: no path (id 0).
    std::string path;
    // Level 4: the chips of each local next-level child, by child index. The
    // Worker maps one window heap of window_heap_bytes per (child, chip) — a
    // member slot, numbered child by child — before it forks them, for
    // allocate_global_domain; global_window_child_names name the children in
    // messages ("L3[1]"). Empty: no global windows.
    std::vector<uint32_t> global_window_chips;
    std::vector<std::string> global_window_child_names;
    // Level 4: the device kind each such child's chips drive (empty: all
    // simulated); a global domain is refused a member on a child whose chips
    // drive another kind (their kernels reach only their own device memory).
    std::vector<chip::DeviceKind> global_window_devices;
    // A level-3 child of such a Worker: its parent's global windows (inherited
    // at the fork) and the slot of this Worker's chip 0 there. Its chips reach
    // the windows of global domains they are members of.
    std::shared_ptr<WindowMemory> global_windows;
    uint32_t global_window_slot = 0;

    static constexpr std::chrono::seconds MAX_SPIN{1};

    // Throws std::invalid_argument naming the field and the rule for an option
    // out of range: spin (0 <= budget <= MAX_SPIN, a valid SpinPolicy),
    // task_timeout and close_grace (>= 0), chip_lane.chip (ChipServiceConfig::
    // validate), num_chips and num_workers (not both above 0: the next level is
    // chips or Workers). The Worker constructor calls it first.
    void validate() const;
    // Whether every option equals other's; the collaborators (handlers and
    // hooks, which have no equality) are not compared.
    [[nodiscard]] bool same_options(const WorkerConfig& other) const;
};

}  // namespace simpler
