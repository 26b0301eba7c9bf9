// Worker's late callables (internal/worker_impl.h, "Late callables"): the install message
// queued on each lane of the callable's kind, sent when the lane is free and
// before any later task, and the answers collected per install ticket.
#include <algorithm>
#include <string>
#include <utility>

#include "simpler/engine/internal/worker_impl.h"

namespace simpler {

uint64_t Worker::Impl::begin_install(ChildKind kind, uint64_t callable, const std::string& name,
                                     std::span<const std::byte> payload) {
    require_owner_process("Worker.install");
    if (closed_) throw std::logic_error("Worker.install: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.install: the Worker is not running (call init())");
    if (kind == ChildKind::WORKER)
        throw std::invalid_argument("Worker.install: next-level Workers take no callables after init() ('" + name +
                                    "'); register it before init()");
    auto blob = std::make_shared<const std::vector<std::byte>>(install_blob(callable, payload));
    if (blob->size() > config_.blob_capacity)
        throw std::invalid_argument("Worker.install: the install message of '" + name + "' needs " +
                                    std::to_string(blob->size()) + " bytes, the mailbox holds " +
                                    std::to_string(config_.blob_capacity));
    std::lock_guard lock(mu_);
    if (stopping_) throw std::logic_error("Worker.install: the Worker is closed");
    std::vector<std::string>& names =
        kind == ChildKind::SUB_WORKER ? config_.sub_callable_names : config_.chip_lane.chip.orchestrations;
    if (callable != names.size())
        throw std::invalid_argument("Worker.install: callable id " + std::to_string(callable) + " is not the next " +
                                    (kind == ChildKind::SUB_WORKER ? "sub-worker" : "chip") + " callable id (" +
                                    std::to_string(names.size()) + ")");
    names.push_back(name);
    const uint64_t ticket = next_install_++;
    InstallState& state = installs_[ticket];
    const size_t first = lane_base_[static_cast<size_t>(kind)];
    const size_t count = core_.children()[static_cast<size_t>(kind)];
    for (size_t i = first; i < first + count; ++i) {
        Lane& l = lanes_[i];
        if (l.lost) continue;
        if (l.installs.empty()) ++lanes_installing_;
        l.installs.push_back(QueuedInstall{ticket, blob});
        ++state.pending;
    }
    (void)progress_locked();  // an idle lane gets it now
    return ticket;
}

std::optional<std::vector<InstallRefusal>> Worker::Impl::wait_install(uint64_t ticket, ipc::Deadline until) {
    require_owner_process("Worker.wait_install");
    // Installs are rare and off the task path: this waiter never spins.
    ipc::SpinWaiter waiter(ipc::never_spin_policy());
    for (;;) {
        const uint32_t seen = bell_.sequence();
        ipc::Deadline deadline = ipc::NO_DEADLINE;
        {
            std::lock_guard lock(mu_);
            auto it = installs_.find(ticket);
            if (it == installs_.end())
                throw std::logic_error("Worker.wait_install: no install " + std::to_string(ticket) + " is pending");
            // This thread drives the lanes too (as submit() does): the answers
            // need no other thread to be collected.
            if (!stopping_ && it->second.pending > 0) deadline = progress_locked();
            if (it->second.pending == 0) {
                std::vector<InstallRefusal> refused = std::move(it->second.refused);
                installs_.erase(it);
                // The answers came in the order the children finished; a message lists them by child.
                std::ranges::sort(refused, {}, [](const InstallRefusal& r) { return r.child.index; });
                return refused;
            }
            if (stopping_) {
                installs_.erase(it);
                throw std::logic_error(
                    "Worker.wait_install: the Worker was closed before every child had installed the callable");
            }
        }
        if (ipc::Clock::now() >= until) return std::nullopt;
        (void)bell_.wait_past(seen, waiter, std::min(deadline, until));
    }
}

void Worker::Impl::abandon_install(uint64_t ticket) {
    std::lock_guard lock(mu_);
    installs_.erase(ticket);
}

void Worker::Impl::publish_next_control_locked(size_t i) {
    Lane& l = lanes_[i];
    if (!l.forgets.empty()) {
        publish_forget_locked(i);
    } else if (!l.installs.empty()) {
        publish_install_locked(i);
    } else {
        // In order: a chained task follows its producer onto the child.
        while (!l.held.empty() && !l.control_in_flight) {
            const Dispatch d = l.held.front();
            l.held.pop_front();
            publish_locked(i, d);
        }
    }
}

void Worker::Impl::deliver_installs_locked() {
    // The task path pays one comparison here while no install is queued anywhere.
    if (lanes_installing_ == 0) return;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        const Lane& l = lanes_[i];
        if (!l.lost && l.in_flight.empty() && !l.control_in_flight && !l.installs.empty()) publish_install_locked(i);
    }
}

void Worker::Impl::publish_install_locked(size_t i) {
    Lane& l = lanes_[i];
    const QueuedInstall next = l.installs.front();
    uint64_t seq = 0;
    const ipc::PublishStatus st = l.mailbox->publish(INSTALL_CALLABLE, ipc::CallConfig{}, *next.blob, seq);
    if (st == ipc::PublishStatus::OK) {
        l.installs.pop_front();
        if (l.installs.empty()) --lanes_installing_;
        l.install_on_child = next.ticket;
        l.control_in_flight = true;
        return;
    }
    if (st == ipc::PublishStatus::LANE_DEAD && !l.lost) lose_lane_locked(i, dead_lane_why_locked(l));
}

void Worker::Impl::finish_install_locked(uint64_t ticket, ChildRef child, const std::string& why) {
    auto it = installs_.find(ticket);
    if (it == installs_.end()) return;  // its waiter gave up (abandon_install, or close() ended the wait)
    if (!why.empty()) it->second.refused.push_back(InstallRefusal{child, why});
    if (it->second.pending > 0) --it->second.pending;
}

void Worker::Impl::drop_installs_locked(Lane& l) {
    for (const QueuedInstall& q : l.installs) finish_install_locked(q.ticket, l.ref, {});
    if (!l.installs.empty()) --lanes_installing_;
    l.installs.clear();
    if (l.install_on_child != 0)
        finish_install_locked(std::exchange(l.install_on_child, 0), l.ref,
                              "the child was lost with the install on it (" + l.lost_why + ")");
}

}  // namespace simpler
