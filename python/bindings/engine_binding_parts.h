// The parts of EngineWorker's binding (bind_engine.cpp) that live in files of
// their own. bind_engine() calls each where its methods belong in the class,
// so the class and its generated stub keep one order.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include "simpler/engine/worker.h"
#include "simpler/ipc/futex.h"

namespace simpler::bindings {

// A wait's end: None waits for ever; ValueError for a negative or unrepresentable timeout.
simpler::ipc::Deadline deadline_after(std::optional<double> timeout_s);

// bind_engine_runs.cpp: wait(), the run lifecycle (cancel, end, wait, take the finished) and late installs.
void bind_engine_runs(nanobind::class_<Worker>& cls);

// bind_engine_memory.cpp: device blocks, communication domains, and the arena and window stats.
void bind_engine_memory(nanobind::class_<Worker>& cls);

// bind_failure_report.cpp: FailedTask, FailureReport and EngineRunError (a RunError in Python).
void bind_failure_report(nanobind::module_& m);

}  // namespace simpler::bindings
