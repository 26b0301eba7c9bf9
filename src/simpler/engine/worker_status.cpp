// Worker: what it tells about itself while it runs (its children's state,
// its progress, its trace and edge log), read under the engine mutex, and
// the children lost below a next-level Worker child (below_status.h), and
// the device each chip opened (chip_facts_page.h).
#include <string>
#include <vector>

#include "simpler/engine/below_status.h"
#include "simpler/engine/internal/worker_impl.h"

namespace simpler {

EdgeLog Worker::Impl::take_edge_log() {
    std::lock_guard lock(mu_);
    return core_.take_edge_log();
}

std::string ChildStatus::line() const {
    std::string out = child.name();
    if (lost) return out + ": lost (" + why + ")";
    out += ": usable";
    if (below_lost > 0) out += "; lost below it: " + below;
    return out;
}

std::vector<ChildStatus> Worker::Impl::child_states() const {
    std::lock_guard lock(mu_);
    std::vector<ChildStatus> out;
    for (const Lane& l : lanes_) {
        ChildStatus s;
        s.child = l.ref;
        s.lost = l.lost;
        if (l.lost) {
            s.why = l.lost_why;
        } else if (l.below_lost > 0) {
            s.below_lost = l.below_lost;
            s.below = l.below_text;
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> Worker::Impl::child_status() const {
    std::vector<std::string> out;
    for (const ChildStatus& s : child_states()) out.push_back(s.line());
    return out;
}

void Worker::Impl::read_below_locked() {
    bool changed = false;
    for (Lane& l : lanes_) {
        if (!l.below || l.lost) continue;
        std::optional<BelowStatus::Report> r = l.below->read_if_changed(l.below_version);
        if (!r) continue;
        l.below_version = r->version;
        if (r->lost == l.below_lost && r->text == l.below_text) continue;
        l.below_lost = r->lost;
        l.below_text = std::move(r->text);
        changed = true;
    }
    if (changed) status_changed_locked();
}

void Worker::Impl::status_changed_locked() {
    status_->changed();
    // In a next-level Worker child: what is lost at and below this Worker goes up.
    uint32_t lost = 0;
    std::string text;
    for (const Lane& l : lanes_) {
        std::string entry;
        if (l.lost) {
            ++lost;
            entry = l.ref.name() + ": lost (" + l.lost_why + ")";
        } else if (l.below_lost > 0) {
            lost += l.below_lost;
            entry = l.ref.name() + " → " + l.below_text;
        }
        if (!entry.empty()) text += (text.empty() ? "" : "; ") + entry;
    }
    (void)report_up(lost, text);
}

std::vector<TraceEvent> Worker::Impl::trace_events() const {
    std::lock_guard lock(mu_);
    return trace_ ? trace_->events() : std::vector<TraceEvent>{};
}

size_t Worker::Impl::trace_dropped() const {
    std::lock_guard lock(mu_);
    return trace_ ? trace_->dropped() : 0;
}

void Worker::Impl::trace_clear() {
    std::lock_guard lock(mu_);
    if (trace_) trace_->clear();
}

WorkerProgress Worker::Impl::progress() const {
    std::lock_guard lock(mu_);
    WorkerProgress p;
    p.submitted = core_.submitted();
    p.unfinished = core_.unfinished();
    p.lost = lost_count();
    p.children.reserve(lanes_.size());
    for (const Lane& l : lanes_) p.children.push_back({l.ref.name(), l.done, !l.in_flight.empty(), l.lost});
    return p;
}

std::vector<pid_t> Worker::Impl::child_pids() const {
    std::vector<pid_t> out;
    for (const Lane& l : lanes_)
        if (l.child.pid() > 0) out.push_back(l.child.pid());
    return out;
}

chip::DeviceFacts Worker::Impl::device_facts(uint32_t chip) {
    require_owner_process("Worker.device_facts");
    // Held while waiting: close() waits for a chip that is still starting to tell, or to be lost.
    std::lock_guard closing(close_mu_);
    if (closed_) throw std::logic_error("Worker.device_facts: the Worker is closed");
    if (!initialized_) throw std::logic_error("Worker.device_facts: the Worker is not running (call init())");
    const uint32_t chips = core_.children()[static_cast<size_t>(ChildKind::CHIP)];
    const std::string who = "chip " + std::to_string(chip);
    if (chip >= chips)
        throw std::out_of_range("Worker.device_facts: no " + who + " (this Worker has " + std::to_string(chips) +
                                " chips)");
    const Lane& l = lanes_[lane_of(ChildRef{ChildKind::CHIP, chip})];
    if (!l.facts)
        throw std::runtime_error("Worker.device_facts: " + who +
                                 " runs a handler of its own (WorkerConfig::chip_handler) and opens no device");
    for (;;) {
        ChipFactsPage::Reading r = l.facts->read();
        if (r.state == ChipFactsPage::State::OPENED) return std::move(r.facts);
        if (r.state == ChipFactsPage::State::FAILED)
            throw std::runtime_error("Worker.device_facts: " + r.why);  // "chip N could not start: ..."
        {
            std::lock_guard lock(mu_);
            if (l.lost || !l.mailbox->usable())
                throw std::runtime_error("Worker.device_facts: " + who +
                                         " was lost before it told which device it opened (" + dead_lane_why_locked(l) +
                                         ")");
        }
        l.facts->wait(ipc::Clock::now() + std::chrono::milliseconds(20));
    }
}

}  // namespace simpler
