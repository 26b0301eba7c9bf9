#include "simpler/engine/trace.h"

#include <chrono>
#include <utility>

namespace simpler {

int64_t trace_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void TraceRecorder::store(TraceEvent&& e) noexcept {
    if (events_.size() >= capacity_) {
        ++dropped_;
        return;
    }
    try {
        events_.push_back(std::move(e));
    } catch (...) {
        ++dropped_;
    }
}

void TraceRecorder::submitted(TaskHandle task, TaskKind kind, uint64_t callable, uint32_t members,
                              int64_t now_ns) noexcept {
    TraceEvent e;
    e.phase = TracePhase::SUBMIT;
    e.kind = kind;
    e.members = members;
    e.task = task;
    e.callable = callable;
    e.start_ns = e.end_ns = now_ns;
    store(std::move(e));
}

void TraceRecorder::published(size_t lane, const Dispatch& d, int64_t now_ns) noexcept {
    try {
        if (lane >= open_.size()) open_.resize(lane + 1);
        TraceEvent& e = open_[lane].emplace_back();
        e.phase = TracePhase::RUN;
        e.kind = d.kind;
        e.ok = true;
        e.member = d.member;
        e.child = d.child;
        e.members = 0;
        e.task = d.task;
        e.callable = d.callable;
        e.start_ns = now_ns;
        e.end_ns = now_ns;
        for (const Dispatch::LaneProducer& p : d.producers_elsewhere()) e.waits_on.push_back(p.task);
    } catch (...) {
        ++dropped_;
    }
}

void TraceRecorder::collected(size_t lane, std::string_view error, int64_t now_ns) noexcept {
    if (lane >= open_.size() || open_[lane].empty()) return;
    TraceEvent e = std::move(open_[lane].front());
    open_[lane].pop_front();
    e.end_ns = now_ns;
    e.ok = error.empty();
    try {
        e.error.assign(error);
    } catch (...) {
        e.error.clear();  // the event still says it failed
    }
    store(std::move(e));
}

void TraceRecorder::lane_lost(size_t lane, std::string_view why, int64_t now_ns) noexcept {
    while (lane < open_.size() && !open_[lane].empty())
        collected(lane, why.empty() ? std::string_view("lost") : why, now_ns);
}

void TraceRecorder::not_published(const Dispatch& d, std::string_view why, int64_t now_ns) noexcept {
    TraceEvent e;
    e.phase = TracePhase::RUN;
    e.kind = d.kind;
    e.ok = false;
    e.member = d.member;
    e.child = d.child;
    e.task = d.task;
    e.callable = d.callable;
    e.start_ns = e.end_ns = now_ns;
    try {
        e.error.assign(why.empty() ? std::string_view("not published") : why);
    } catch (...) {
        e.error.clear();
    }
    store(std::move(e));
}

void TraceRecorder::clear() noexcept {
    std::vector<TraceEvent>().swap(events_);
    dropped_ = 0;
}

}  // namespace simpler
