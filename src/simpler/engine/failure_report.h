// FailureReport: why a run failed, as a value. Its first level is the Worker
// whose run failed: the first task that failed (or was not run), the child it
// ran on, the cause as a code and a text, and how many tasks that needed it
// were not run; when that task ran on a next-level Worker and that Worker's
// run failed, the next level is that Worker's own report, and so on down.
//
// RunError (below), which Worker::wait throws, carries one; the bindings hand it to Python's
// simpler.RunError, which keeps its fields and renders its message from them
// (render() here, the one spelling). A next-level Worker's child sends its run's
// report to its parent as the text of a FAILED_BELOW result (encode_failure /
// decode_failure); nothing reads an error message to learn where or why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simpler/engine/child_ref.h"

namespace simpler {

namespace ipc {
enum class TaskError : int32_t;
}  // namespace ipc

// Why a level failed: a TaskError a child reported (TASK_FAILED to
// FAILED_BELOW, the same numbers), or what the Worker itself saw. Reports carry
// it by name (failure_code_name) across processes and into Python.
enum class FailureCode : uint8_t {
    NONE = 0,  // no failure (a MemberFault of a member that ran)
    TASK_FAILED = 1,
    BAD_ARGUMENTS = 2,
    UNKNOWN_CALLABLE = 3,
    CHILD_DIED = 4,
    TIMED_OUT = 5,
    PROTOCOL = 6,
    SKIPPED = 7,
    FAILED_BELOW = 8,     // it ran on a next-level Worker whose run failed
    NOT_RUN = 9,          // a task it needed failed, its child was lost, or cancel
    NOT_DISPATCHED = 10,  // its child was gone before the task reached it
    RAISED = 11,          // the orchestration function raised (no task)
    NOT_STARTED = 12,     // a next-level Worker that did not start (no task)
    CLOSED = 13,          // the Worker was closed while the run waited (no task)
};

// "CHILD_DIED"; "NONE" for NONE.
[[nodiscard]] const char* failure_code_name(FailureCode code) noexcept;
// The failure code named `name` (never NONE); nullopt when no code has that name.
[[nodiscard]] std::optional<FailureCode> failure_code_named(std::string_view name) noexcept;
// A child's TaskError as the code its failure carries (TaskError::NONE: NONE).
[[nodiscard]] FailureCode failure_code_of(ipc::TaskError error) noexcept;

// One Worker's part of a failure.
struct FailedTask {
    uint32_t level = 0;  // the level of the Worker whose run failed
    // false: no one task failed (RAISED, NOT_STARTED, CLOSED, UNKNOWN_CALLABLE; CHILD_DIED: a remote
    // Worker lost with its parent's task on it)
    bool has_task = false;
    uint64_t task = 0;
    uint64_t run = 0;
    bool sub = false;  // a sub-worker task ("sub task 3 of run 1")
    uint64_t callable_id = 0;
    std::string callable;  // its registered name; empty when it has none
    uint32_t member = 0;
    ChildRef child{};  // where it ran, or would have
    bool any_child = false;  // not run before a child was chosen: "any <child.kind>", child.index unused
    FailureCode code = FailureCode::NONE;
    std::string text;
    uint64_t not_run = 0;  // tasks of the run not run because they needed it
    // Set when the task was not run because a task of another run failed: that
    // task (one level deep: its own `cause` is empty).
    std::shared_ptr<const FailedTask> cause;

    // "[sub ]task 3 of run 1 (callable 'name', member 0)".
    [[nodiscard]] std::string task_text() const;
    // "chip 1", or "any sub-worker".
    [[nodiscard]] std::string child_text() const;
    // The child's name in a failure path: "chip 1", "sub-worker 0", "L3[2]".
    [[nodiscard]] std::string hop() const;
};

struct FailureReport {
    std::vector<FailedTask> levels;  // [0]: the failed run's Worker; [i + 1]: inside levels[i]'s child Worker

    // The sentence a RunError says (without the path from the top, which only
    // the top of a tree adds): "task 3 of run 1 (callable 'k', member 0) on
    // chip 1 failed: TASK_FAILED: ...; 2 dependent task(s) were not run".
    [[nodiscard]] std::string render() const { return render_from(0); }
    [[nodiscard]] std::string render_from(size_t level) const;
    // The hops from levels[0]'s child down to where it happened ("L3[0]", "chip 1").
    [[nodiscard]] std::vector<std::string> path() const;
    // The hops from levels[from]'s child down, appended to `out` joined by " → ".
    void append_path(size_t from, std::string& out) const;
};

// Why a task's member failed, as its Worker saw it (code NONE: it did not).
struct MemberFault {
    FailureCode code = FailureCode::NONE;
    std::string text;
    std::shared_ptr<const FailureReport> below;  // FAILED_BELOW: the next-level Worker's own report

    [[nodiscard]] bool failed() const noexcept { return code != FailureCode::NONE; }
    // cause_text(); FAILED_BELOW: the child Worker's report led by its path ("L3[0] → chip 1: task ...").
    [[nodiscard]] std::string words(const ChildRef& child) const;
};

// The name a failure path gives next-level Worker `index` of a level-`level`
// Worker: "L3[0]" under an L4.
[[nodiscard]] std::string child_worker_name(uint32_t level, uint32_t index);

// "CODE: text", "not run: text", "not dispatched to chip 1: text" — a cause
// in words, as the messages have always said it.
[[nodiscard]] std::string cause_text(FailureCode code, std::string_view text, const ChildRef& child);

inline constexpr size_t FAILURE_MAX_LEVELS = 16;

// The report as NUL-free text of at most `max_bytes` bytes (the longest texts
// are shortened, marked " [truncated]", until it fits; max_bytes >= 1024).
[[nodiscard]] std::string encode_failure(const FailureReport& report, size_t max_bytes);

// Decodes encode_failure's text, checking every field; on a refusal `why`
// names the field and the rule and nothing is returned. noexcept: the text
// comes from another process.
[[nodiscard]] std::optional<FailureReport> decode_failure(std::string_view text, std::string& why) noexcept;

// The first failure of a run, as a value (Python: simpler.RunError, a
// RuntimeError); what() is report.render().
class RunError : public std::runtime_error {
public:
    explicit RunError(FailureReport report) : std::runtime_error(report.render()), report_(std::move(report)) {}
    [[nodiscard]] const FailureReport& report() const noexcept { return report_; }

private:
    FailureReport report_;
};

}  // namespace simpler
