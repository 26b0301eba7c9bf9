#include "simpler/ipc/spin_wait.h"

#include <sched.h>

#include <stdexcept>

#include "simpler/ipc/cpu_placement.h"

namespace simpler::ipc {
namespace {

// Pauses between clock reads in the spin loop: a pause is tens of cycles, a
// clock read about 20 ns, so the budget is honoured to well under a microsecond.
constexpr int PAUSES_PER_CLOCK_READ = 16;

}  // namespace

void validate_spin_policy(const SpinPolicy& p) {
    using std::chrono::nanoseconds;
    if (p.min_spin < nanoseconds::zero()) throw std::invalid_argument("SpinPolicy.min_spin: must be >= 0");
    if (p.initial_spin < p.min_spin) throw std::invalid_argument("SpinPolicy.initial_spin: must be >= min_spin");
    if (p.max_spin < p.initial_spin) throw std::invalid_argument("SpinPolicy.max_spin: must be >= initial_spin");
    if (p.yield_after < nanoseconds::zero()) throw std::invalid_argument("SpinPolicy.yield_after: must be >= 0");
}

SpinWaiter::SpinWaiter(SpinPolicy policy, SharedCore shared_core)
    : policy_(policy), budget_(policy.initial_spin), shared_core_(shared_core) {
    validate_spin_policy(policy_);
}

std::optional<uint32_t> SpinWaiter::wait_change(SharedWord& w, uint32_t seen, Deadline deadline,
                                                bool peer_waking) noexcept {
    ++stats_.waits;
    uint32_t v = load_acquire(w);
    if (v != seen) {
        ++stats_.spin_hits;
        return v;
    }
    // A probe spins initial_spin over a collapsed budget (see the header).
    std::chrono::nanoseconds spin = budget_;
    bool probe = false;
    if (policy_.adaptive && budget_ < policy_.initial_spin && ++since_probe_ >= PROBE_EVERY) {
        since_probe_ = 0;
        probe = true;
        spin = policy_.initial_spin;
        ++stats_.probes;
    }
    // A peer being woken answers after its wake-up: cover it (see the header).
    const bool cover = peer_waking && policy_.max_spin.count() > 0;
    if (cover) {
        spin = std::max(spin, WAKE_UP_COVER);
        ++stats_.covers;
    }
    // A first round without reading the clock: a hot hand-off usually lands
    // here, and a clock read costs about as much as the hand-off itself.
    if (spin.count() > 0) {
        for (int i = 0; i < PAUSES_PER_CLOCK_READ; ++i) {
            cpu_pause();
            v = load_acquire(w);
            if (v != seen) {
                ++stats_.spin_hits;
                if (probe) budget_ = std::max(budget_, policy_.initial_spin);
                note_shared_core(false);
                return v;
            }
        }
    }
    const Clock::time_point start = Clock::now();
    if (spin.count() > 0) {
        const Clock::time_point spin_end = std::min(deadline, start + spin);
        // The clock as read before the round in progress: a hit is timed by it,
        // not by a clock read of its own, which would delay every hot hand-off
        // by as much as the hand-off costs (the wait is undercounted by at most
        // one round of pauses).
        Clock::time_point round_start = start;
        bool after_long_yield = false;  // the round in progress follows a yield that ran another thread
        for (;;) {
            for (int i = 0; i < PAUSES_PER_CLOCK_READ; ++i) {
                cpu_pause();
                v = load_acquire(w);
                if (v != seen) {
                    ++stats_.spin_hits;
                    adapt(round_start - start, false);
                    if (probe) budget_ = std::max(budget_, policy_.initial_spin);
                    note_shared_core(after_long_yield);
                    return v;
                }
            }
            const Clock::time_point now = Clock::now();
            round_start = now;
            after_long_yield = false;
            if (now >= spin_end) break;
            // Past yield_after, give the core away between rounds: on an
            // oversubscribed machine the peer may be waiting for this very core.
            if (now - start >= policy_.yield_after) {
                sched_yield();
                round_start = Clock::now();
                after_long_yield = round_start - now >= LONG_YIELD;
            }
        }
    }
    note_shared_core(false);
    ++stats_.sleeps;
    for (;;) {
        v = sleep_while_equal(w, seen, deadline);
        if (v != seen) {
            if (policy_.adaptive && !cover) adapt(Clock::now() - start, true);
            return v;
        }
        if (Clock::now() >= deadline) {
            ++stats_.timeouts;
            // Nothing arrived: only a wait longer than max_spin says something
            // (spinning would not have helped); a short deadline says nothing.
            const std::chrono::nanoseconds waited = Clock::now() - start;
            if (waited > policy_.max_spin && !cover) adapt(waited, true);
            return std::nullopt;
        }
    }
}

void SpinWaiter::note_shared_core(bool shared) noexcept {
    if (!shared) {
        shared_streak_ = 0;
        return;
    }
    ++stats_.shared_core_waits;
    if (shared_core_ != SharedCore::STEP_ASIDE || ++shared_streak_ < STEP_ASIDE_STREAK) return;
    shared_streak_ = 0;
    const Clock::time_point now = Clock::now();
    if (now < next_step_aside_) return;
    // A quiet stretch since the last try starts the spacing afresh.
    if (now - next_step_aside_ > STEP_ASIDE_MAX_GAP) step_aside_gap_ = STEP_ASIDE_MIN_GAP;
    ++stats_.step_aside_tries;
    const StepAside outcome = step_off_current_cpu();
    if (outcome == StepAside::MOVED) ++stats_.step_asides;
    next_step_aside_ = now + step_aside_gap_;
    // A pinned mask is seen by two system calls, and a mask freed later should
    // be used at once: it keeps the shortest gap. A move that did not stick
    // (the next streak came within the gap: wake-ups that place one side beside
    // the other bring them back together) and a machine without an idle CPU
    // double it.
    step_aside_gap_ = outcome == StepAside::PINNED
                          ? STEP_ASIDE_MIN_GAP
                          : std::min<std::chrono::nanoseconds>(2 * step_aside_gap_, STEP_ASIDE_MAX_GAP);
}

void SpinWaiter::adapt(std::chrono::nanoseconds waited, bool slept) noexcept {
    if (!policy_.adaptive) return;
    const std::chrono::nanoseconds twice = 2 * waited;
    if (!slept) {
        budget_ = std::clamp(std::max(budget_, twice), policy_.min_spin, policy_.max_spin);
    } else if (waited <= policy_.max_spin) {
        budget_ = std::clamp(twice, policy_.min_spin, policy_.max_spin);
    } else {
        budget_ = std::max(budget_ / 2, policy_.min_spin);
    }
}

}  // namespace simpler::ipc
