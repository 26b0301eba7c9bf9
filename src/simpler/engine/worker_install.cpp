// Worker's control messages (internal/worker_impl.h, "Late callables"; control_messages.h):
// an install queued on each lane of the callable's kind and waited for by its ticket, and
// each lane's next forget or install sent when its child is free, before any later task.
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
    const uint64_t ticket = control_.open_install();
    const size_t first = lane_base_[static_cast<size_t>(kind)];
    const size_t count = core_.children()[static_cast<size_t>(kind)];
    for (size_t i = first; i < first + count; ++i)
        if (!lanes_[i].lost) control_.queue_install(i, ticket, blob);
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
            // This thread drives the lanes too (as submit() does): the answers
            // need no other thread to be collected.
            if (!stopping_ && control_.install_pending(ticket, "Worker.wait_install")) deadline = progress_locked();
            if (!control_.install_pending(ticket, "Worker.wait_install")) return control_.take_refusals(ticket);
            if (stopping_) {
                control_.drop_install(ticket);
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
    control_.drop_install(ticket);
}

void Worker::Impl::publish_next_control_locked(size_t i) {
    if (control_.next(i) != ControlMessages::Next::NONE) {
        publish_control_locked(i);
        return;
    }
    // In order: a chained task follows its producer onto the child.
    std::deque<Dispatch>& held = control_.held(i);
    while (!held.empty() && !control_.on_child(i)) {
        const Dispatch d = held.front();
        held.pop_front();
        publish_locked(i, d);
    }
}

void Worker::Impl::deliver_control_locked() {
    control_.queue_posted_forgets([this](size_t i) { return !lanes_[i].lost; });
    // The task path pays one comparison here while no message is queued anywhere.
    if (!control_.any_queued()) return;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        const Lane& l = lanes_[i];
        if (!l.lost && l.in_flight.empty() && !control_.on_child(i) && control_.next(i) != ControlMessages::Next::NONE)
            publish_control_locked(i);
    }
}

void Worker::Impl::publish_control_locked(size_t i) {
    Lane& l = lanes_[i];
    uint64_t seq = 0;
    ipc::PublishStatus st = ipc::PublishStatus::OK;
    if (control_.next(i) == ControlMessages::Next::FORGET) {
        // Bounded as a task is: a child that never answers (stopped, hung) is lost at the deadline.
        st = l.mailbox->publish(FORGET_CALLABLE, ipc::CallConfig{}, control_.forget_message(i), seq, task_deadline());
    } else {
        st = l.mailbox->publish(INSTALL_CALLABLE, ipc::CallConfig{}, control_.install_message(i), seq);
    }
    if (st == ipc::PublishStatus::OK) {
        control_.sent(i);
        return;
    }
    if (st == ipc::PublishStatus::LANE_DEAD && !l.lost) lose_lane_locked(i, dead_lane_why_locked(l));
}

}  // namespace simpler
