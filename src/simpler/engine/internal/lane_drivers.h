// LaneDrivers: which thread drives a Worker's lanes. A thread that waits (wait(),
// wait_run(), a submit waiting for room, a release waiting for a name) drives
// them itself while it waits, holding a Turn: a finished task reaches it in one
// hand-off instead of two. The scheduler thread drives them only while no Turn
// is held (between, while the orchestration function is still submitting); it
// never spins, and while a wait drives it parks on the drive word, re-checking
// every 1-16 ms, so it takes no core from the threads on the latency path.
//
// The waits share one adaptive SpinWaiter (spin_wait.h: it learns how long a
// result takes), taken by the first Turn; a Turn while another holds it waits
// with a fresh one. A publish that had to wake its child is noted
// (note_woke_child, under the engine mutex), so the next wait covers the
// child's wake-up in its spin.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_word.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler {

class LaneDrivers {
public:
    explicit LaneDrivers(const ipc::SpinPolicy& spin) : spin_(spin), shared_waiter_(spin) {}

    // A waiting thread's turn at driving the lanes, for its whole wait.
    class Turn {
    public:
        explicit Turn(LaneDrivers& drivers);
        Turn(const Turn&) = delete;
        Turn& operator=(const Turn&) = delete;
        // Counted off on return: the scheduler thread is not woken (when a wait returns, nothing it
        // waited for is in flight, and a parked scheduler looks again within its park time).
        ~Turn() { drivers_.turns_.fetch_sub(1, std::memory_order_acq_rel); }
        // The shared adaptive waiter when this Turn holds it, else its own.
        [[nodiscard]] ipc::SpinWaiter& waiter() noexcept { return spare_ ? *spare_ : drivers_.shared_waiter_; }

    private:
        LaneDrivers& drivers_;
        std::unique_lock<std::mutex> shared_;
        std::optional<ipc::SpinWaiter> spare_;
    };

    // The scheduler thread's view: whether a Turn is held (it stands down), and its park.
    [[nodiscard]] bool turn_held() const noexcept { return turns_.load(std::memory_order_acquire) > 0; }
    [[nodiscard]] uint32_t park_word() noexcept { return ipc::load_acquire(park_word_); }
    // Sleeps until unpark() or `park` passes, whichever is first; returns the next park time (twice
    // as long while the same wait goes on, up to PARK_MAX).
    std::chrono::microseconds park(uint32_t seen, ipc::SpinWaiter& waiter, std::chrono::microseconds park);
    // Wakes a parked scheduler thread (close()).
    void unpark() { ipc::bump(park_word_); }

    // Under the engine mutex: a publish woke its child; and whether one did since the last call.
    void note_woke_child(bool woke) noexcept { woke_child_ |= woke; }
    [[nodiscard]] bool take_woke_child() noexcept { return std::exchange(woke_child_, false); }

    static constexpr std::chrono::microseconds PARK_MIN{1000};
    static constexpr std::chrono::microseconds PARK_MAX{16000};

private:
    ipc::SpinPolicy spin_;
    ipc::SpinWaiter shared_waiter_;
    std::mutex shared_mu_;  // held by the Turn using shared_waiter_
    std::atomic<int> turns_{0};
    ipc::SharedWord park_word_{0, 0};
    bool woke_child_ = false;  // under the engine mutex
};

}  // namespace simpler
