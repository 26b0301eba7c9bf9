// Moving the calling thread off a CPU it shares with the peer it waits for.
//
// Two processes that hand work back and forth by spinning belong on two CPUs.
// When a wake-up puts them on one CPU while another CPU idles, the scheduler's
// balancer leaves them there for about ten milliseconds on this kind of VM
// (both always look cache-hot), and every hand-off then costs a spin up to
// SpinPolicy::yield_after plus two context switches: a Python round trip of
// ~12 us instead of ~2.5 us (docs/internals/ipc.md, "Two limits of this policy"). The
// waiter sees it from the inside (spin_wait.h: its waits keep ending right
// after a sched_yield that ran another thread) and asks step_off_current_cpu()
// to move it.
//
// The move is the kernel's own: the thread's affinity mask without its current
// CPU, which migrates it at once, then the mask as it was, which leaves it
// where it now runs. Nothing else is changed; a mask the caller set stays
// exactly as set.
#pragma once

#include <cstdint>
#include <optional>

namespace simpler::ipc {

enum class StepAside : uint8_t {
    MOVED,         // the thread now runs on another CPU of its mask
    NO_ROOM,       // more tasks runnable than CPUs online: a move could not find an idle CPU
    PINNED,        // the thread's mask allows one CPU only (or the CPU it runs on is not in it)
    NOT_MOVED,     // the kernel refused the mask or kept the thread where it was
};

// Tasks runnable on the whole machine now (the fourth field of /proc/loadavg,
// the running thread included); nullopt when it cannot be read.
std::optional<uint32_t> runnable_tasks() noexcept;

// Moves the calling thread to another CPU of its affinity mask when the
// machine has room (runnable tasks <= CPUs online) and restores the mask.
// Costs three system calls and a read of /proc/loadavg: for the rare case,
// never a hot path.
StepAside step_off_current_cpu() noexcept;

}  // namespace simpler::ipc
