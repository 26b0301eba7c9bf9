// RuntimeConfig: how a simulated chip's task runtime (chip_runtime.h) is sized
// — its core threads and its ring of task payload slots — with its defaults
// and the rule each field obeys. Owns no runtime; reaches no tensor type, so
// chip_service.h can hold one. Trusts nothing: validate_runtime_config checks
// every field.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace simpler::chip {

struct RuntimeConfig {
    uint32_t core_threads = 2;   // kernels run concurrently on this many threads, in [1, 256]
    uint32_t ring_slots = 256;   // task payload slots, in [2, 1048576]; a submit waits while the ring is full
    // How long a core thread with no ready task, and run()'s caller waiting for
    // the run's last kernels, spin (yielding after 2 us) before they sleep, in
    // [0, 1 s]. A Worker's chips take it from the Worker's spin policy (its
    // max_spin); 0 sleeps at once, so an idle chip uses no CPU.
    std::chrono::nanoseconds idle_spin{0};

    bool operator==(const RuntimeConfig&) const = default;
};

// Throws std::invalid_argument naming the field (`prefix` + its name) and its
// range when a field is out of range (a config holding one names its own path).
void validate_runtime_config(const RuntimeConfig& config, std::string_view prefix = "RuntimeConfig.");

}  // namespace simpler::chip
