#include "simpler/engine/worker_config.h"

#include <stdexcept>
#include <string>

#include "simpler/engine/seconds_text.h"
#include "simpler/task_interface/field_refusal.h"

namespace simpler {

void WorkerConfig::validate() const {
    if (spin.min_spin.count() < 0 || spin.max_spin > MAX_SPIN)
        throw FieldRefusal("WorkerConfig.spin",
                           "a spin budget in seconds, 0 <= spin <= 1 (got " +
                               seconds_text(spin.min_spin.count() < 0 ? spin.min_spin : spin.max_spin) + ")");
    try {
        ipc::validate_spin_policy(spin);
    } catch (const std::invalid_argument& e) {
        throw FieldRefusal("WorkerConfig.spin", e.what());
    }
    if (task_timeout.count() < 0)
        throw FieldRefusal("WorkerConfig.task_timeout",
                           "must be >= 0 seconds, 0: none (got " + seconds_text(task_timeout) + ")");
    if (close_grace.count() < 0)
        throw FieldRefusal("WorkerConfig.close_grace", "must be >= 0 seconds (got " + seconds_text(close_grace) + ")");
    if (level < 3 || level > 8)
        throw FieldRefusal("WorkerConfig.level", "must be in [3, 8] (got " + std::to_string(level) + ")");
    if (num_relay_workers > num_workers)
        throw FieldRefusal("WorkerConfig.num_relay_workers", "at most num_workers (got " +
                                                                 std::to_string(num_relay_workers) + " of " +
                                                                 std::to_string(num_workers) + " Workers)");
    if (num_chips > 0 && num_workers > 0)
        throw FieldRefusal("WorkerConfig.num_workers", "a Worker's next level is chips or Workers, not both (got " +
                                                           std::to_string(num_chips) + " chips and " +
                                                           std::to_string(num_workers) + " Workers)");
    if (window_heap_bytes == 0 || window_heap_bytes > (uint64_t{1} << 46))
        throw FieldRefusal("WorkerConfig.window_heap_bytes",
                           "must be > 0 and at most 64 TiB (got " + std::to_string(window_heap_bytes) + ")");
    try {
        chip_lane.chip.validate();
    } catch (const FieldRefusal& e) {
        throw e.within("WorkerConfig.chip_lane.chip.");
    }
}

bool WorkerConfig::same_options(const WorkerConfig& o) const {
    return level == o.level && num_chips == o.num_chips && num_sub_workers == o.num_sub_workers &&
           num_workers == o.num_workers && num_relay_workers == o.num_relay_workers &&
           worker_callable_names == o.worker_callable_names && blob_capacity == o.blob_capacity && spin == o.spin &&
           task_timeout == o.task_timeout && close_grace == o.close_grace && chip_lane == o.chip_lane &&
           device_memory_bytes == o.device_memory_bytes && window_heap_bytes == o.window_heap_bytes &&
           record_edges == o.record_edges && sub_callable_names == o.sub_callable_names && trace == o.trace &&
           trace_capacity == o.trace_capacity && edge_log_capacity == o.edge_log_capacity &&
           max_unfinished == o.max_unfinished && chip_conditions == o.chip_conditions && path == o.path;
}

}  // namespace simpler
