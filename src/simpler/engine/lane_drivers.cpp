#include "simpler/engine/internal/lane_drivers.h"

#include <algorithm>

namespace simpler {

LaneDrivers::Turn::Turn(LaneDrivers& drivers) : drivers_(drivers), shared_(drivers.shared_mu_, std::try_to_lock) {
    drivers_.turns_.fetch_add(1, std::memory_order_acq_rel);
    if (!shared_.owns_lock()) spare_.emplace(drivers_.spin_);
}

std::chrono::microseconds LaneDrivers::park(uint32_t seen, ipc::SpinWaiter& waiter, std::chrono::microseconds park) {
    (void)waiter.wait_change(park_word_, seen, ipc::Clock::now() + park);
    return std::min(park * 2, PARK_MAX);
}

}  // namespace simpler
