// TraceRecorder: a bounded in-memory timeline of one Worker's runs — when each
// task was submitted, and for each member dispatched to a child, when it was
// published to that child's mailbox and when its result was collected.
//
// What each timestamp means (nanoseconds on steady_clock, which on Linux is
// CLOCK_MONOTONIC, the clock of Python's time.monotonic_ns()):
//   SUBMIT start_ns: the engine accepted the task (Worker::submit, after the
//                    dependency checks, under the Worker's lock); end_ns == start_ns.
//   RUN    start_ns: just before the thread driving the lanes (submit(), wait()
//                    or the scheduler thread) published the member to the
//                    lane's mailbox (the child can start from there on);
//          end_ns:   the thread driving the lanes collected the member's result
//                    (the child finished before this; the gap is that thread's
//                    wake-up latency, microseconds on an idle machine).
// Both RUN stamps are parent-side, so a RUN interval contains the child's own
// run; two RUN intervals that do not overlap ran one after the other for sure,
// and two on different children that overlap by more than the wake-up latency
// ran concurrently. Two on one chip may overlap and still run one after the
// other: a chip's lane holds a task behind the one it runs (a chained one
// behind its producers, or a ready one; EngineConfig::chip_lane_depth), and
// its interval starts at that hand-off.
//
// Bounded: at most `capacity` events are kept; every later one is counted in
// dropped() and not stored. Events of members still in flight are not in
// events() until their result is collected.
//
// Not thread-safe: the Worker calls every method under its own mutex (the
// engine mutex, already held wherever a lane is published to or collected
// from). Recording is
// noexcept: an event that cannot be stored (out of memory) counts as dropped.
// Does not own: the lanes, the engine's tasks; it copies what it records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "simpler/engine/engine_core.h"
#include "simpler/engine/trace_event.h"

namespace simpler {

class TraceRecorder {
public:
    explicit TraceRecorder(size_t capacity = DEFAULT_TRACE_CAPACITY) : capacity_(capacity) {}

    // The engine accepted task `task` of `members` members.
    void submitted(TaskHandle task, TaskKind kind, uint64_t callable, uint32_t members,
                   int64_t now_ns = trace_now_ns()) noexcept;
    // Member `d` was published to lane `lane`; its event stays open until
    // collected() or lane_lost(). A lane's open events close in publish order.
    void published(size_t lane, const Dispatch& d, int64_t now_ns = trace_now_ns()) noexcept;
    // The lane's oldest open member finished (error empty on success); no-op when none is open.
    void collected(size_t lane, std::string_view error, int64_t now_ns = trace_now_ns()) noexcept;
    // The lane's child is gone: its open members, if any, end failed with `why`.
    void lane_lost(size_t lane, std::string_view why, int64_t now_ns = trace_now_ns()) noexcept;
    // Member `d` was never published (`why`): a zero-length failed RUN event.
    void not_published(const Dispatch& d, std::string_view why, int64_t now_ns = trace_now_ns()) noexcept;

    [[nodiscard]] const std::vector<TraceEvent>& events() const noexcept { return events_; }
    [[nodiscard]] size_t dropped() const noexcept { return dropped_; }
    [[nodiscard]] size_t capacity() const noexcept { return capacity_; }
    // Forgets (and frees) every stored event and the dropped count; open events stay open.
    void clear() noexcept;

private:
    void store(TraceEvent&& e) noexcept;

    size_t capacity_;
    std::vector<TraceEvent> events_;
    std::vector<std::deque<TraceEvent>> open_;  // per lane: the members in flight, oldest first
    size_t dropped_ = 0;
};

}  // namespace simpler
