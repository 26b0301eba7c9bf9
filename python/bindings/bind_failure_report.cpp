// A run's failure as a value (simpler/engine/failure_report.h): FailedTask and
// FailureReport, read-only, their text form for a next-level Worker's answer
// to its parent, and EngineRunError — what the engine's RunError becomes in
// Python, carrying the report (simpler.RunError is made from it, in
// simpler.runtime.errors).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <string>

#include "engine_binding_parts.h"
#include "simpler/engine/failure_report.h"
#include "simpler/ipc/mailbox_frame.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::FailedTask;
using simpler::FailureReport;

namespace simpler::bindings {
namespace {

// Text that crossed from a child: bytes UTF-8 cannot decode (a message cut
// mid-character) come out as backslash escapes, never as an error.
nb::str text_of(const std::string& s) {
    return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace"));
}

}  // namespace

void bind_failure_report(nb::module_& m) {
    nb::class_<FailedTask>(m, "FailedTask",
                           "One Worker's part of a run's failure: the first task that failed or was not run (when "
                           "has_task), the child it ran on, the cause (code, text) and how many tasks needing it "
                           "were not run.")
        .def_ro("level", &FailedTask::level, "The level of the Worker whose run failed.")
        .def_ro("has_task", &FailedTask::has_task,
                "False when no one task failed (code RAISED, NOT_STARTED, CLOSED or UNKNOWN_CALLABLE).")
        .def_ro("task", &FailedTask::task, "The task's id within its Worker (0 when has_task is False).")
        .def_ro("run", &FailedTask::run, "The run it was submitted in (the Worker's runs count from 0).")
        .def_ro("sub", &FailedTask::sub, "A sub-worker task.")
        .def_ro("callable_id", &FailedTask::callable_id, "The id of the callable it named (its handle's id).")
        .def_prop_ro(
            "callable", [](const FailedTask& f) { return text_of(f.callable); },
            "The callable's registered name ('' when it has none).")
        .def_ro("member", &FailedTask::member, "Which member of the task (0 but in a group).")
        .def_prop_ro(
            "child_kind", [](const FailedTask& f) { return std::string(simpler::child_kind_name(f.child.kind)); },
            "'chip', 'sub-worker' or 'worker' (a next-level Worker).")
        .def_prop_ro(
            "child_index",
            [](const FailedTask& f) -> std::optional<uint32_t> {
                if (f.any_child) return std::nullopt;
                return f.child.index;
            },
            "Its index among the Worker's children of that kind; None when it was not run before a child was "
            "chosen.")
        .def_prop_ro(
            "code", [](const FailedTask& f) { return text_of(simpler::failure_code_name(f.code)); },
            "The cause: a TaskError name (TASK_FAILED, BAD_ARGUMENTS, UNKNOWN_CALLABLE, CHILD_DIED, TIMED_OUT, "
            "PROTOCOL, SKIPPED), NOT_RUN, NOT_DISPATCHED, FAILED_BELOW, RAISED, NOT_STARTED or CLOSED.")
        .def_prop_ro(
            "text", [](const FailedTask& f) { return text_of(f.text); },
            "What happened, in the words of the level where it happened (a traceback, a kernel's message, a signal).")
        .def_ro("not_run", &FailedTask::not_run,
                "How many tasks of the run were not run because they needed what it failed to produce.")
        .def_prop_ro(
            "cause",
            [](const FailedTask& f) -> std::optional<FailedTask> {
                if (!f.cause) return std::nullopt;
                return *f.cause;
            },
            "The task of another run whose failure kept this one from running; None otherwise.")
        .def(
            "task_text", [](const FailedTask& f) { return text_of(f.task_text()); },
            "'task 3 of run 1 (callable 'name', member 0)'.")
        .def("hop", &FailedTask::hop, "The child in a failure path: 'chip 1', 'sub-worker 0', 'L3[2]'.")
        .def("__repr__", [](const FailedTask& f) {
            return text_of("FailedTask(L" + std::to_string(f.level) + ", " + (f.has_task ? f.task_text() + ", " : "") +
                           simpler::failure_code_name(f.code) + ")");
        });
    nb::class_<FailureReport>(m, "FailureReport",
                              "Why a run failed: levels[0] is the Worker whose run failed, levels[i + 1] the failure "
                              "inside levels[i]'s next-level Worker.")
        .def_ro("levels", &FailureReport::levels,
                "One FailedTask per Worker, from the one whose run failed down to where it happened.")
        .def(
            "render", [](const FailureReport& r) { return text_of(r.render()); },
            "The sentence a RunError says (without the path from the top).")
        .def("path", &FailureReport::path, "The hops from levels[0]'s child down to where it happened.")
        .def(
            "encode",
            [](const FailureReport& r, size_t max_bytes) {
                if (max_bytes < 1024)
                    throw std::invalid_argument("FailureReport.encode.max_bytes: must be >= 1024 (got " +
                                                std::to_string(max_bytes) + ")");
                return text_of(simpler::encode_failure(r, max_bytes));
            },
            "max_bytes"_a = static_cast<size_t>(simpler::ipc::ERROR_MESSAGE_BYTES - 1),
            "The report as the text a next-level Worker's failed task answers with (at most max_bytes bytes; the "
            "longest texts are shortened to fit).")
        .def_static(
            "of_worker",
            [](uint32_t level, const std::string& code, const std::string& text) {
                using simpler::FailureCode;
                const std::optional<FailureCode> named = simpler::failure_code_named(code);
                if (named != FailureCode::RAISED && named != FailureCode::NOT_STARTED &&
                    named != FailureCode::UNKNOWN_CALLABLE)
                    throw std::invalid_argument(
                        "FailureReport.of_worker.code: must be RAISED, NOT_STARTED or UNKNOWN_CALLABLE (got '" + code +
                        "')");
                if (level < 3 || level > 8)
                    throw std::invalid_argument("FailureReport.of_worker.level: must be in [3, 8] (got " +
                                                std::to_string(level) + ")");
                FailedTask f;
                f.level = level;
                f.code = *named;
                f.text = text;
                return FailureReport{{std::move(f)}};
            },
            "level"_a, "code"_a, "text"_a,
            "The report of a level-`level` Worker's run that failed before any task did: its orchestration "
            "raised (RAISED), the Worker did not start (NOT_STARTED), or the parent named an orchestration it does "
            "not have (UNKNOWN_CALLABLE).")
        .def_static(
            "decode",
            [](const std::string& text) {
                std::string why;
                std::optional<FailureReport> r = simpler::decode_failure(text, why);
                if (!r) throw std::invalid_argument(why);
                return *r;
            },
            "text"_a, "encode()'s text as a report; ValueError naming the field and the rule.")
        .def("__repr__",
             [](const FailureReport& r) { return text_of("FailureReport(" + r.render().substr(0, 200) + ")"); });
    static nb::object engine_run_error =
        nb::steal(PyErr_NewExceptionWithDoc("simpler._core.EngineRunError",
                                            "The engine's RunError: a run failed; .report is its FailureReport "
                                            "(simpler.RunError, which the Worker raises, is made from it).",
                                            PyExc_RuntimeError, nullptr));
    m.attr("EngineRunError") = engine_run_error;
    nb::register_exception_translator(
        [](const std::exception_ptr& p, void* payload) {
            try {
                std::rethrow_exception(p);
            } catch (const simpler::RunError& e) {
                nb::handle type(static_cast<PyObject*>(payload));
                nb::object error = type(text_of(e.what()));
                error.attr("report") = nb::cast(e.report());
                PyErr_SetObject(type.ptr(), error.ptr());
            }
        },
        engine_run_error.ptr());
}

}  // namespace simpler::bindings
