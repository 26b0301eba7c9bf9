// The Python side of a Worker's children, as the C++ handlers a forked child
// serves (bind_engine.cpp hands them to EngineWorker): a task handed to a
// Python dispatcher, a forget, a late install, and a next-level Worker's lane.
// Each runs in the child, holding the GIL for good (bind_engine.cpp, "GIL").
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "simpler/engine/worker.h"

namespace simpler::bindings {

// A Python exception's traceback, type and message, through utf8_of
// (nanobind's what() cannot encode a lone surrogate).
std::string python_error_text(const nanobind::python_error& e);

// A Python dispatcher's answer as a task's outcome: None succeeded; a
// FailureReport (a next-level Worker's run failed) is FAILED_BELOW with the
// report encoded to fit a result message; anything else is TASK_FAILED with its
// text, as UTF-8 with what UTF-8 cannot hold (a lone surrogate) backslash-escaped.
simpler::ipc::TaskOutcome outcome_of(const nanobind::object& answer);

// Hands the task to the Python dispatcher, whose answer is outcome_of()'s; an
// exception escaping the dispatcher is TASK_FAILED with its type, message and traceback.
simpler::ipc::TaskHandler python_handler(const nanobind::object& dispatch);

// A forget handed to Python function `forget(ids: list)`. There is nothing to
// report a failure to (a forget is not a task): the cache keeps the entry and
// the error goes to sys.unraisablehook, labelled `where`.
simpler::ForgetHandler python_forget(nanobind::object forget, const char* where);

// A Python sub-worker's (or test chip's) import cache is simpler.model.buffer's default_registry().
simpler::ForgetHandler python_forget();

// An install message handed to Python function `install(callable_id: int,
// payload: bytes)`, which returns None once the callable is installed, or why
// it could not (text); an exception escaping it is that why.
simpler::InstallHandler python_install(nanobind::object install);

// A next-level Worker lane: worker_start(index) starts the child's own Worker
// (forking its children) and returns (dispatch, close, forget). Each task goes
// to dispatch like a sub-worker's; a forget goes to forget(ids), which drops
// them here and passes them on to the child's own lanes; close() runs when the
// handlers are destroyed, which serve's caller does once the parent asks the
// child to stop.
simpler::ChildHandlers next_level_worker_handler(const nanobind::object& worker_start, uint32_t index);

}  // namespace simpler::bindings
