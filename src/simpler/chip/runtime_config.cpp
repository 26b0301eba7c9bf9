#include "simpler/chip/runtime_config.h"

#include <stdexcept>
#include <string>

#include "simpler/task_interface/field_refusal.h"

namespace simpler::chip {

void validate_runtime_config(const RuntimeConfig& config, std::string_view prefix) {
    const std::string at(prefix);
    if (config.core_threads < 1 || config.core_threads > 256)
        throw FieldRefusal(at + "core_threads",
                           "must be in [1, 256] (got " + std::to_string(config.core_threads) + ")");
    if (config.ring_slots < 2 || config.ring_slots > (1u << 20))
        throw FieldRefusal(at + "ring_slots",
                           "must be in [2, 1048576] (got " + std::to_string(config.ring_slots) + ")");
    if (config.idle_spin < std::chrono::nanoseconds::zero() || config.idle_spin > std::chrono::seconds(1))
        throw FieldRefusal(at + "idle_spin",
                           "must be in [0, 1 s] (got " + std::to_string(config.idle_spin.count()) + " ns)");
}

}  // namespace simpler::chip
