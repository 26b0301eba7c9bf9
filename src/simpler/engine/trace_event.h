// TraceEvent: one event of a Worker's timeline (Worker::trace_events), and the
// clock its stamps are in; trace.h says what each stamp means and records them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simpler/deps/task_id.h"
#include "simpler/engine/child_ref.h"
#include "simpler/engine/ids.h"
#include "simpler/engine/task_handle.h"

namespace simpler {

inline constexpr size_t DEFAULT_TRACE_CAPACITY = 1'000'000;

enum class TracePhase : uint8_t {
    SUBMIT = 0,  // a task entered the engine
    RUN = 1,     // one member of a task on one child, publish to collect
};

struct TraceEvent {
    TracePhase phase = TracePhase::RUN;
    TaskKind kind = TaskKind::SUB;  // the task's kind (which callable table `callable` indexes)
    bool ok = true;        // RUN: the child reported success; SUBMIT: true
    uint32_t member = 0;   // RUN: the member's index in its task
    ChildRef child{};      // RUN: the child the member ran on (its lane)
    uint32_t members = 0;  // SUBMIT: how many members the task has
    TaskHandle task{};
    uint64_t callable = 0;
    int64_t start_ns = 0;  // see the header comment
    int64_t end_ns = 0;
    std::string error;     // RUN that failed: the failure's text; else empty
    // RUN: the producers on other chips this member waited for on its own chip
    // (cross-chip conditions, engine_chain.cpp), tasks of the same run; else empty.
    std::vector<TaskId> waits_on;
};

// Now, in the nanoseconds every TraceEvent is stamped in.
[[nodiscard]] int64_t trace_now_ns() noexcept;

}  // namespace simpler
