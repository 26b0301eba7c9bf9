#include "simpler/ipc/spin_wait.h"

#include <sched.h>

#include <stdexcept>

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

SpinWaiter::SpinWaiter(SpinPolicy policy) : policy_(policy), budget_(policy.initial_spin) {
    validate_spin_policy(policy_);
}

std::optional<uint32_t> SpinWaiter::wait_change(SharedWord& w, uint32_t seen, Deadline deadline) noexcept {
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
    // A first round without reading the clock: a hot hand-off usually lands
    // here, and a clock read costs about as much as the hand-off itself.
    if (spin.count() > 0) {
        for (int i = 0; i < PAUSES_PER_CLOCK_READ; ++i) {
            cpu_pause();
            v = load_acquire(w);
            if (v != seen) {
                ++stats_.spin_hits;
                if (probe) budget_ = std::max(budget_, policy_.initial_spin);
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
        for (;;) {
            for (int i = 0; i < PAUSES_PER_CLOCK_READ; ++i) {
                cpu_pause();
                v = load_acquire(w);
                if (v != seen) {
                    ++stats_.spin_hits;
                    adapt(round_start - start, false);
                    if (probe) budget_ = std::max(budget_, policy_.initial_spin);
                    return v;
                }
            }
            const Clock::time_point now = Clock::now();
            round_start = now;
            if (now >= spin_end) break;
            // Past yield_after, give the core away between rounds: on an
            // oversubscribed machine the peer may be waiting for this very core.
            if (now - start >= policy_.yield_after) sched_yield();
        }
    }
    ++stats_.sleeps;
    for (;;) {
        v = sleep_while_equal(w, seen, deadline);
        if (v != seen) {
            if (policy_.adaptive) adapt(Clock::now() - start, true);
            return v;
        }
        if (Clock::now() >= deadline) {
            ++stats_.timeouts;
            // Nothing arrived: only a wait longer than max_spin says something
            // (spinning would not have helped); a short deadline says nothing.
            const std::chrono::nanoseconds waited = Clock::now() - start;
            if (waited > policy_.max_spin) adapt(waited, true);
            return std::nullopt;
        }
    }
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
