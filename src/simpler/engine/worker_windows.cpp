// Worker: its communication domains' windows (allocate_domain), the global
// windows of a level-4 Worker (allocate_global_domain) and how those are
// judged at submit, there and in its level-3 children
// (WorkerConfig::global_window_chips, window_memory.h).
#include <stdexcept>
#include <string>
#include <vector>

#include "simpler/engine/internal/worker_impl.h"

namespace simpler {
namespace {

// Why a chip on a device may not be a domain's member (after "... drive <kind> devices, ").
constexpr const char* DEVICE_WINDOWS_RULE =
    "whose kernels reach only their own device memory, and a domain's windows are host shared memory; "
    "communication domains need simulated chips (device=\"simulated\")";

}  // namespace

std::optional<std::string> Worker::Impl::global_window_problem(const BufferDescriptor& d, ChildRef to,
                                                               const std::string& who) const {
    if (!global_windows_) return std::nullopt;
    if (global_owner_) {
        // The carving Worker: a window goes to a child that holds a member chip.
        uint32_t first = 0;
        uint32_t count = 0;
        if (to.kind == ChildKind::WORKER && to.index + 1 < global_first_slot_.size()) {
            first = global_first_slot_[to.index];
            count = global_first_slot_[to.index + 1] - first;
        }
        return global_windows_->member_problem_in(d.identity, first, count, who);
    }
    // A child of the carving Worker: its copy of the bookkeeping is the fork's,
    // so the shared membership table judges by address.
    const uint64_t addr = descriptor_address(d);
    if (!global_windows_->contains(addr, d.nbytes)) return std::nullopt;
    const std::string name = global_windows_->domain_name_at(addr);
    const std::string what = "window buffer " + d.identity.to_string() + " of " +
                             (name.empty() ? std::string("a global domain") : "global domain '" + name + "'");
    if (to.kind != ChildKind::CHIP)
        return what + " may only be named by a task on a chip that is a member of its domain, not by " + who;
    const uint32_t slot = config_.global_window_slot + to.index;
    switch (global_windows_->access(slot, addr, d.nbytes)) {
        case WindowAccess::MEMBER: return std::string{};
        case WindowAccess::NOT_MEMBER:
            return what + " may only be named by a task on a chip that is a member of its domain; " + who + " (" +
                   global_windows_->slot_name(slot) + ") is not a member";
        case WindowAccess::OUTSIDE: break;
    }
    return what +
           ": its domain was released (its block ended or release() was called); a task may not name it any "
           "more";
}

WindowDomain Worker::Impl::allocate_domain(const std::string& name, const std::vector<uint32_t>& workers,
                                           uint64_t window_size, const std::vector<WindowBufferSpec>& buffers) {
    if (closed_) throw std::logic_error("allocate_domain: the Worker is closed");
    // A domain's windows are host shared memory its chips' kernels address in place.
    if (const chip::DeviceKind kind = config_.chip_lane.chip.device.kind;
        kind != chip::DeviceKind::SIMULATED && !config_.chip_handler)
        throw std::invalid_argument("allocate_domain '" + name + "': this Worker's chips drive " +
                                    chip::device_kind_name(kind) + " devices, " + DEVICE_WINDOWS_RULE);
    await_released_name(*windows_, name);
    std::vector<std::string> lost;
    {
        std::lock_guard lock(mu_);
        lost = core_.lost_why(ChildKind::CHIP);
    }
    return windows_->allocate(name, workers, window_size, buffers, lost);
}

void Worker::Impl::release_windows(WindowMemory& windows, uint64_t id) {
    std::vector<CanonicalIdentity> identities = windows.begin_release(id);
    {
        std::lock_guard lock(mu_);
        core_.release_after([this, &windows, id, identities = std::move(identities)] {
            windows.finish_release(id);
            // Every chip's import cache drops the windows and refuses a later
            // descriptor of one, whatever lies at its address by then (a
            // level-3 child forwards a forget to its chips).
            forget(identities);
        });
    }
    bell_.ring();
}

void Worker::Impl::release_domain(uint64_t id) { release_windows(*windows_, id); }

WindowDomain Worker::Impl::allocate_global_domain(const std::string& name, const std::vector<uint32_t>& slots,
                                                  uint64_t window_size, const std::vector<WindowBufferSpec>& buffers) {
    if (closed_) throw std::logic_error("allocate_global_domain: the Worker is closed");
    if (!global_owner_)
        throw std::invalid_argument(
            "allocate_global_domain: this Worker has no global windows (no local "
            "next-level child with chips)");
    // A member on a child whose chips drive a device: the windows are host shared memory its kernels cannot reach.
    for (size_t i = 0; i < slots.size() && !config_.global_window_devices.empty(); ++i) {
        size_t c = 0;
        while (c + 1 < global_first_slot_.size() && slots[i] >= global_first_slot_[c + 1]) ++c;
        if (c >= config_.global_window_devices.size()) continue;  // not a slot: allocate() names it
        if (const chip::DeviceKind kind = config_.global_window_devices[c]; kind != chip::DeviceKind::SIMULATED)
            throw std::invalid_argument("allocate_global_domain '" + name + "': members[" + std::to_string(i) +
                                        "]: " + config_.global_window_child_names[c] + "'s chips drive " +
                                        chip::device_kind_name(kind) + " devices, " + DEVICE_WINDOWS_RULE);
    }
    await_released_name(*global_windows_, name);
    std::vector<std::string> lost;
    {
        std::lock_guard lock(mu_);
        const std::vector<std::string> children = core_.lost_why(ChildKind::WORKER);
        for (size_t c = 0; c + 1 < global_first_slot_.size(); ++c)
            for (uint32_t s = global_first_slot_[c]; s < global_first_slot_[c + 1]; ++s)
                lost.push_back(c < children.size() ? children[c] : std::string{});
    }
    return global_windows_->allocate(name, slots, window_size, buffers, lost);
}

void Worker::Impl::release_global_domain(uint64_t id) {
    if (!global_owner_) throw std::invalid_argument("release of global domain: this Worker has no global windows");
    release_windows(*global_windows_, id);
}

}  // namespace simpler
