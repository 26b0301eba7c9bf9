// ControlMessages: what a Worker sends its children besides tasks, lane by lane —
// the forgets of freed buffers (Worker::forget, from any thread) and the
// installs of late callables (Worker::begin_install) — with the tasks held on
// a lane behind them, and the install tickets their answers go to.
//
// Order on a lane: a control message goes to the child only when nothing else
// is on it, forgets before installs; a task dispatched to the lane while one
// is on the child, or while tasks are held there, is held, and the held tasks
// go in order once no control message is left for the lane (next() says
// NONE). A lost lane's queued messages are dropped, and an install on its
// child is refused in that install's ticket.
//
// Everything but post_forgets() is called under the Worker's engine mutex;
// post_forgets() takes only a leaf lock of its own, so a buffer freed under
// any Worker's engine mutex may post.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "simpler/engine/child_ref.h"
#include "simpler/engine/engine_core.h"
#include "simpler/engine/worker.h"
#include "simpler/task_interface/identity.h"

namespace simpler {

class ControlMessages {
public:
    // Messages hold at most `blob_capacity` bytes (a lane's mailbox blob).
    explicit ControlMessages(size_t blob_capacity) : blob_capacity_(blob_capacity) {}

    // One more lane (the Worker's init(), lane by lane).
    void add_lane() { lanes_.emplace_back(); }

    // Forgets of these identities for every lane (any thread); queued on the
    // lanes by queue_posted_forgets().
    void post_forgets(std::span<const CanonicalIdentity> identities);
    // Queues what was posted on each lane `usable(lane)` accepts; one acquire
    // load when nothing was posted.
    template <class Usable>
    void queue_posted_forgets(Usable&& usable);

    // A new install, answered by every lane queue_install() queues it on.
    uint64_t open_install();
    void queue_install(size_t lane, uint64_t ticket, std::shared_ptr<const std::vector<std::byte>> blob);
    // Whether install `ticket` still waits for a lane's answer; std::logic_error naming `who` when it
    // is not open (never opened, taken, or dropped).
    [[nodiscard]] bool install_pending(uint64_t ticket, const char* who) const;
    // The lanes' refusals of install `ticket`, by child index; the ticket is closed.
    [[nodiscard]] std::vector<InstallRefusal> take_refusals(uint64_t ticket);
    // Closes `ticket` unanswered (its waiter gave up); later answers are dropped.
    void drop_install(uint64_t ticket) { tickets_.erase(ticket); }

    // The message due next on `lane` once its child is free.
    enum class Next : uint8_t { NONE, FORGET, INSTALL };
    [[nodiscard]] Next next(size_t lane) const noexcept;
    // Whether any lane has a message queued: the task path's one comparison.
    [[nodiscard]] bool any_queued() const noexcept { return queued_lanes_ > 0; }
    // The next FORGET message of `lane`: as many of its identities as a blob holds.
    [[nodiscard]] std::span<const std::byte> forget_message(size_t lane);
    // The next INSTALL message of `lane`.
    [[nodiscard]] std::span<const std::byte> install_message(size_t lane) const;
    // The message next(lane) named is on the child now: dequeued (a FORGET: the one forget_message(lane)
    // made just before).
    void sent(size_t lane);
    // Whether a control message is on `lane`'s child, and whether it is an install.
    [[nodiscard]] bool on_child(size_t lane) const noexcept { return lanes_[lane].on_child; }
    [[nodiscard]] bool install_on_child(size_t lane) const noexcept { return lanes_[lane].install_on_child != 0; }
    // The child's answer to the message on it (`why`: an install's refusal; empty: done).
    void answered(size_t lane, ChildRef child, const std::string& why);

    // Whether a task for `lane` may go to the child now: nothing queued, on the child or held there
    // (asked for every ready chip task: inline).
    [[nodiscard]] bool takes_tasks(size_t lane) const noexcept {
        const Lane& l = lanes_[lane];
        return !l.on_child && l.held.empty() && !l.queued();
    }
    // Whether a task for `lane` must wait behind a control message (or a task held before it).
    [[nodiscard]] bool must_hold(size_t lane) const noexcept {
        return lanes_[lane].on_child || !lanes_[lane].held.empty();
    }
    void hold(size_t lane, const Dispatch& d) { lanes_[lane].held.push_back(d); }
    // The tasks held on `lane`, oldest first (a cancel marks one withdrawn there).
    [[nodiscard]] std::deque<Dispatch>& held(size_t lane) noexcept { return lanes_[lane].held; }
    [[nodiscard]] const std::deque<Dispatch>& held(size_t lane) const noexcept { return lanes_[lane].held; }

    // `lane` is lost (`why`, for the refusal of an install on its child): its queued messages are
    // dropped (their installs no longer wait for it), and the tasks held there are returned.
    [[nodiscard]] std::deque<Dispatch> lose(size_t lane, ChildRef child, const std::string& why);

private:
    struct QueuedInstall {
        uint64_t ticket;
        std::shared_ptr<const std::vector<std::byte>> blob;  // one per install, shared by its lanes
    };
    struct Lane {
        std::vector<CanonicalIdentity> forgets;  // oldest first
        std::deque<QueuedInstall> installs;      // oldest first
        bool on_child = false;                   // a forget or an install is on the child
        uint64_t install_on_child = 0;           // its ticket (0: none, or a forget)
        std::deque<Dispatch> held;               // tasks taken for the lane meanwhile, in order
        [[nodiscard]] bool queued() const noexcept { return !forgets.empty() || !installs.empty(); }
    };
    struct Ticket {
        size_t pending = 0;  // lanes yet to answer
        std::vector<InstallRefusal> refused;
    };
    // Keeps queued_lanes_ true after `change` altered lane `l`'s queues.
    template <class Change>
    void requeue(Lane& l, Change&& change);
    void answer_install(uint64_t ticket, ChildRef child, const std::string& why);

    size_t blob_capacity_;
    std::vector<Lane> lanes_;
    size_t queued_lanes_ = 0;  // lanes with a forget or an install queued
    std::unordered_map<uint64_t, Ticket> tickets_;
    uint64_t next_ticket_ = 1;
    std::vector<std::byte> forget_blob_;  // the last forget_message, and how many identities it holds
    size_t forget_batch_ = 0;

    std::mutex inbox_mu_;  // a leaf: guards inbox_ only
    std::vector<CanonicalIdentity> inbox_;
    std::atomic<bool> posted_{false};  // inbox_ may be non-empty
};

template <class Change>
void ControlMessages::requeue(Lane& l, Change&& change) {
    const bool before = l.queued();
    change();
    if (before != l.queued()) before ? --queued_lanes_ : ++queued_lanes_;
}

template <class Usable>
void ControlMessages::queue_posted_forgets(Usable&& usable) {
    if (!posted_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(inbox_mu_);
    posted_.store(false, std::memory_order_relaxed);
    for (size_t i = 0; i < lanes_.size(); ++i) {
        if (!usable(i)) continue;
        Lane& l = lanes_[i];
        requeue(l, [&] { l.forgets.insert(l.forgets.end(), inbox_.begin(), inbox_.end()); });
    }
    inbox_.clear();
}

}  // namespace simpler
