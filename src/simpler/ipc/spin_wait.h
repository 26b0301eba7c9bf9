// The waiting policy: spin on a SharedWord for a budget, with a CPU pause in
// the loop, then sleep on its futex. SpinPolicy is the configuration;
// SpinWaiter holds one waiter's adaptive budget and counters (it lives in the
// waiting process, never in shared memory, and belongs to one thread). The
// watched word may hold any value a peer wrote; the waiter only compares it
// with the value it last saw, and every wait is bounded by its deadline.
//
// A hand-off that lands while the waiter spins costs well under a microsecond;
// one that has to wake a sleeping process costs ten to a few tens of
// microseconds on a two-core machine (docs/ipc.md). Spinning for longer than a
// wake-up costs cannot win, and spinning while idle is forbidden, so the budget
// is bounded by max_spin (default 25 us) and, when adaptive, follows the
// observed arrival times:
//   - a wait that ended while spinning keeps the budget at least twice its
//     duration as of the spin's last clock read (hot hand-offs stay hot; a hit
//     reads no clock of its own, so it is undercounted by at most one round);
//   - a wait that slept but ended within max_spin sets the budget to twice
//     its duration (a longer spin would have caught it);
//   - a wait that slept longer than max_spin halves the budget, down to
//     min_spin (the peer is idle; spinning bought nothing); so does a wait
//     that timed out after longer than max_spin;
//   - while the budget is below initial_spin, every PROBE_EVERY-th wait spins
//     initial_spin instead (a probe), and a probe that ends while spinning
//     puts the budget back to at least initial_spin. Without it a collapsed
//     budget could not come back where a futex wake-up costs more than
//     max_spin: every wait then sleeps, and every sleep measures the wake-up
//     too, longer than max_spin, so it halves the budget again (this VM's
//     wake-ups take 10-50 us; a Python round trip sat at 12-55 us instead of
//     3 us for a thousand calls at a time). A probe costs at most initial_spin
//     per PROBE_EVERY waits.
// With max_spin == 0 the waiter never spins (the cold regime). The budget is
// counted from the first clock read, after a first round of 16 pauses (under a
// microsecond) that reads no clock and leaves the budget as it is.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_word.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace simpler::ipc {

inline void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

struct SpinPolicy {
    std::chrono::nanoseconds initial_spin{10'000};
    std::chrono::nanoseconds min_spin{0};
    std::chrono::nanoseconds max_spin{25'000};
    bool adaptive = true;
    // After spinning this long, the waiter calls sched_yield() between spin
    // rounds (about every half microsecond), so a spin cannot starve a peer
    // that needs this core. nanoseconds::max() never yields.
    std::chrono::nanoseconds yield_after{2'000};

    bool operator==(const SpinPolicy&) const = default;
};

// A waiter that never spins: every wait goes straight to the futex.
inline SpinPolicy never_spin_policy() noexcept {
    return SpinPolicy{std::chrono::nanoseconds{0}, std::chrono::nanoseconds{0}, std::chrono::nanoseconds{0}, false,
                      std::chrono::nanoseconds::max()};
}
// A waiter that spins a fixed budget and never adapts.
inline SpinPolicy fixed_spin_policy(std::chrono::nanoseconds spin,
                                    std::chrono::nanoseconds yield_after = std::chrono::nanoseconds{2'000}) noexcept {
    return SpinPolicy{spin, spin, spin, false, yield_after};
}

// Throws std::invalid_argument unless 0 <= min_spin <= initial_spin <= max_spin
// and yield_after >= 0.
void validate_spin_policy(const SpinPolicy& policy);

struct SpinStats {
    uint64_t waits = 0;        // completed wait_change calls, timed out included
    uint64_t spin_hits = 0;    // waits that ended while spinning
    uint64_t sleeps = 0;       // waits that reached the futex
    uint64_t timeouts = 0;     // waits that hit their deadline
    uint64_t probes = 0;       // waits that spun initial_spin over a collapsed budget
};

// While an adaptive budget is below initial_spin, one wait in this many is a probe.
inline constexpr uint32_t PROBE_EVERY = 32;

class SpinWaiter {
public:
    // Validates the policy (std::invalid_argument).
    explicit SpinWaiter(SpinPolicy policy = {});

    // Waits until w.value != seen or `deadline`; returns the new value, or
    // nullopt on timeout. Reads are acquire: what the publisher wrote before
    // changing the word is visible afterwards.
    std::optional<uint32_t> wait_change(SharedWord& w, uint32_t seen, Deadline deadline = NO_DEADLINE) noexcept;

    [[nodiscard]] std::chrono::nanoseconds budget() const noexcept { return budget_; }
    [[nodiscard]] const SpinPolicy& policy() const noexcept { return policy_; }
    [[nodiscard]] const SpinStats& stats() const noexcept { return stats_; }

private:
    void adapt(std::chrono::nanoseconds waited, bool slept) noexcept;

    SpinPolicy policy_;
    std::chrono::nanoseconds budget_;
    uint32_t since_probe_ = 0;  // waits past the first check since the last probe
    SpinStats stats_;
};

}  // namespace simpler::ipc
