#include "simpler/engine/internal/control_messages.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace simpler {

void ControlMessages::post_forgets(std::span<const CanonicalIdentity> identities) {
    if (identities.empty()) return;
    std::lock_guard lock(inbox_mu_);
    inbox_.insert(inbox_.end(), identities.begin(), identities.end());
    posted_.store(true, std::memory_order_release);
}

uint64_t ControlMessages::open_install() {
    const uint64_t ticket = next_ticket_++;
    tickets_.emplace(ticket, Ticket{});
    return ticket;
}

void ControlMessages::queue_install(size_t lane, uint64_t ticket, std::shared_ptr<const std::vector<std::byte>> blob) {
    Lane& l = lanes_[lane];
    requeue(l, [&] { l.installs.push_back(QueuedInstall{ticket, std::move(blob)}); });
    ++tickets_.at(ticket).pending;
}

bool ControlMessages::install_pending(uint64_t ticket, const char* who) const {
    auto it = tickets_.find(ticket);
    if (it == tickets_.end())
        throw std::logic_error(std::string(who) + ": no install " + std::to_string(ticket) + " is pending");
    return it->second.pending > 0;
}

std::vector<InstallRefusal> ControlMessages::take_refusals(uint64_t ticket) {
    auto it = tickets_.find(ticket);
    if (it == tickets_.end()) return {};
    std::vector<InstallRefusal> refused = std::move(it->second.refused);
    tickets_.erase(it);
    // The answers came in the order the children finished; a message lists them by child.
    std::ranges::sort(refused, {}, [](const InstallRefusal& r) { return r.child.index; });
    return refused;
}

ControlMessages::Next ControlMessages::next(size_t lane) const noexcept {
    const Lane& l = lanes_[lane];
    if (!l.forgets.empty()) return Next::FORGET;
    return l.installs.empty() ? Next::NONE : Next::INSTALL;
}

std::span<const std::byte> ControlMessages::forget_message(size_t lane) {
    const Lane& l = lanes_[lane];
    const size_t fit = std::max<size_t>(1, blob_capacity_ / sizeof(CanonicalIdentity));
    const size_t n = std::min(fit, l.forgets.size());
    forget_batch_ = n;
    forget_blob_.resize(n * sizeof(CanonicalIdentity));
    if (n > 0) std::memcpy(forget_blob_.data(), l.forgets.data(), forget_blob_.size());
    return forget_blob_;
}

std::span<const std::byte> ControlMessages::install_message(size_t lane) const {
    return *lanes_[lane].installs.front().blob;
}

void ControlMessages::sent(size_t lane) {
    Lane& l = lanes_[lane];
    switch (next(lane)) {
        case Next::FORGET: {
            // The message forget_message(lane) made held the first forget_batch_ of them.
            const size_t n = std::min(l.forgets.size(), forget_batch_);
            requeue(l, [&] { l.forgets.erase(l.forgets.begin(), l.forgets.begin() + static_cast<std::ptrdiff_t>(n)); });
            l.install_on_child = 0;
            break;
        }
        case Next::INSTALL:
            l.install_on_child = l.installs.front().ticket;
            requeue(l, [&] { l.installs.pop_front(); });
            break;
        case Next::NONE: return;
    }
    l.on_child = true;
}

void ControlMessages::answered(size_t lane, ChildRef child, const std::string& why) {
    Lane& l = lanes_[lane];
    l.on_child = false;
    if (l.install_on_child != 0) answer_install(std::exchange(l.install_on_child, 0), child, why);
}

std::deque<Dispatch> ControlMessages::lose(size_t lane, ChildRef child, const std::string& why) {
    Lane& l = lanes_[lane];
    requeue(l, [&] {
        l.forgets.clear();
        // A lost lane runs nothing any more: the installs queued for it stop waiting for it, unrefused.
        for (const QueuedInstall& q : l.installs) answer_install(q.ticket, child, {});
        l.installs.clear();
    });
    if (l.install_on_child != 0)
        answer_install(std::exchange(l.install_on_child, 0), child,
                       "the child was lost with the install on it (" + why + ")");
    l.on_child = false;
    return std::exchange(l.held, {});
}

void ControlMessages::answer_install(uint64_t ticket, ChildRef child, const std::string& why) {
    auto it = tickets_.find(ticket);
    if (it == tickets_.end()) return;  // its waiter gave up (drop_install)
    if (!why.empty()) it->second.refused.push_back(InstallRefusal{child, why});
    if (it->second.pending > 0) --it->second.pending;
}

}  // namespace simpler
