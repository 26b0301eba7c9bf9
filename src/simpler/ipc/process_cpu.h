// CPU time of a process tree, read from /proc, for the idle-cost checks
// (tests and benchmarks): utime + stime of each process (all its threads) from
// /proc/<pid>/stat, summed over the root and every descendant found by
// scanning the ppid field of /proc/*/stat.
//
// The unit is the kernel's clock tick (sysconf(_SC_CLK_TCK), 10 ms here), so a
// measurement needs an interval long enough for the budget to span several
// ticks. A process that exits during the interval drops out of the sum (its
// time is not charged); one that appears is counted from zero. Reads only
// /proc; trusts nothing it parses beyond the numbers' syntax.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace simpler::ipc {

// utime + stime in ticks; nullopt when the process is gone or unreadable.
std::optional<uint64_t> process_cpu_ticks(pid_t pid) noexcept;
// The root (when it exists) and all its descendants.
std::vector<pid_t> process_tree(pid_t root);

struct TreeCpuUsage {
    double cpu_seconds = 0;   // CPU consumed by the tree during the interval
    double wall_seconds = 0;  // length of the interval
    size_t processes = 0;     // processes seen at the end of the interval
    // Share of one core: cpu_seconds / wall_seconds.
    [[nodiscard]] double core_fraction() const noexcept { return wall_seconds > 0 ? cpu_seconds / wall_seconds : 0; }
};

// Samples the tree under `root`, sleeps for `interval`, samples again.
TreeCpuUsage measure_tree_cpu(pid_t root, std::chrono::milliseconds interval);

}  // namespace simpler::ipc
