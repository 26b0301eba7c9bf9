// The waiting policy: spin on a SharedWord for a budget, with a CPU pause in
// the loop, then sleep on its futex. SpinPolicy is the configuration;
// SpinWaiter holds one waiter's adaptive budget and counters (it lives in the
// waiting process, never in shared memory, and belongs to one thread). The
// watched word may hold any value a peer wrote; the waiter only compares it
// with the value it last saw, and every wait is bounded by its deadline.
//
// A hand-off that lands while the waiter spins costs well under a microsecond;
// one that has to wake a sleeping process costs ten to a few tens of
// microseconds on a two-core machine (docs/internals/ipc.md). Spinning for longer than a
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
// A waiter told that its peer is being woken (the publish it waits on had to
// wake a sleeping peer: shared_word.h's bump) spins up to WAKE_UP_COVER
// instead (when it spins at all), and a wait that still ends asleep leaves the
// budget alone: it measured the peer's wake-up, not the peer. Without this,
// once both sides sleep, each wait lasts the other's wake-up (30-60 us here),
// longer than max_spin, so both budgets collapse and every hand-off sleeps
// (45-95 us a Python round trip for whole stretches), and a probe escapes only
// when both sides probe at once. A covered wait that catches the answer
// spinning keeps the waker awake for the next hand-off.
// With max_spin == 0 the waiter never spins (the cold regime). The budget is
// counted from the first clock read, after a first round of 16 pauses (under a
// microsecond) that reads no clock and leaves the budget as it is.
//
// A shared core: a wait that ends in the round right after a sched_yield that
// took LONG_YIELD or more (the yield ran another thread, and the peer made
// its move meanwhile) says the peer runs on this waiter's CPU. A waiter built
// with SharedCore::STEP_ASIDE that sees STEP_ASIDE_STREAK such waits in a row
// moves itself to another CPU (cpu_placement.h). Tries are spaced by a gap
// that starts at STEP_ASIDE_MIN_GAP and doubles after each try, up to
// STEP_ASIDE_MAX_GAP (a move that did not stick, because wake-ups keep placing
// one side beside the other, shows as the next streak within the gap; a
// machine without an idle CPU refuses every try), except after one that found
// the mask pinning the thread (two system calls; a mask freed later is used at
// once); a quiet stretch longer than STEP_ASIDE_MAX_GAP starts it afresh.
// Only one side of a pair may step (two that move at once land together
// again): the children's serving loops do.
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
    uint64_t waits = 0;              // completed wait_change calls, timed out included
    uint64_t spin_hits = 0;          // waits that ended while spinning
    uint64_t sleeps = 0;             // waits that reached the futex
    uint64_t timeouts = 0;           // waits that hit their deadline
    uint64_t probes = 0;             // waits that spun initial_spin over a collapsed budget
    uint64_t covers = 0;             // waits told their peer was being woken (they spun WAKE_UP_COVER)
    uint64_t shared_core_waits = 0;  // waits that ended right after a yield that ran another thread
    uint64_t step_aside_tries = 0;   // streaks of those that asked to move (SharedCore::STEP_ASIDE)
    uint64_t step_asides = 0;        // tries that moved the waiter to another CPU
};

// While an adaptive budget is below initial_spin, one wait in this many is a probe.
inline constexpr uint32_t PROBE_EVERY = 32;
// How long a waiter whose peer is being woken spins (a futex wake-up costs
// 10-60 us on this VM, a little more than a tenth of that on bare metal).
inline constexpr std::chrono::nanoseconds WAKE_UP_COVER{100'000};
// A sched_yield this long ran another thread: one that returns at once takes
// ~0.5 us here, and a peer that spins on the same CPU gives it back only after
// its own yield_after (2 us by default).
inline constexpr std::chrono::nanoseconds LONG_YIELD{1'500};
inline constexpr uint32_t STEP_ASIDE_STREAK = 8;
inline constexpr std::chrono::milliseconds STEP_ASIDE_MIN_GAP{1};
inline constexpr std::chrono::milliseconds STEP_ASIDE_MAX_GAP{64};

// What a waiter does when its waits say the peer shares its CPU (see above).
enum class SharedCore : uint8_t { STAY, STEP_ASIDE };

class SpinWaiter {
public:
    // Validates the policy (std::invalid_argument).
    explicit SpinWaiter(SpinPolicy policy = {}, SharedCore shared_core = SharedCore::STAY);

    // Waits until w.value != seen or `deadline`; returns the new value, or
    // nullopt on timeout. Reads are acquire: what the publisher wrote before
    // changing the word is visible afterwards. `peer_waking`: the change will
    // come from a peer this waiter's side just woke (see the header).
    std::optional<uint32_t> wait_change(SharedWord& w, uint32_t seen, Deadline deadline = NO_DEADLINE,
                                        bool peer_waking = false) noexcept;

    [[nodiscard]] std::chrono::nanoseconds budget() const noexcept { return budget_; }
    [[nodiscard]] const SpinPolicy& policy() const noexcept { return policy_; }
    [[nodiscard]] const SpinStats& stats() const noexcept { return stats_; }

private:
    void adapt(std::chrono::nanoseconds waited, bool slept) noexcept;
    // Counts a wait that ended after a long yield (`shared`) or resets the streak.
    void note_shared_core(bool shared) noexcept;

    SpinPolicy policy_;
    std::chrono::nanoseconds budget_;
    uint32_t since_probe_ = 0;  // waits past the first check since the last probe
    SharedCore shared_core_;
    uint32_t shared_streak_ = 0;  // waits in a row that ended after a long yield
    Clock::time_point next_step_aside_{};                         // no try before this
    std::chrono::nanoseconds step_aside_gap_{STEP_ASIDE_MIN_GAP};  // the spacing after the next try
    SpinStats stats_;
};

}  // namespace simpler::ipc
