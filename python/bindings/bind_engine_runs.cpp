// EngineWorker's waits, run lifecycle and late installs (engine_binding_parts.h):
// wait(), cancel_run, end_run, wait_run, take_finished_runs (the completion
// thread of Python's RunFuture), begin_install / wait_install / abandon_install
// (simpler.runtime.register). Every wait releases the GIL while it sleeps.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine_binding_parts.h"
#include "simpler/engine/chip_install.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::ChildKind;
using simpler::ChildRef;
using simpler::Worker;

namespace simpler::bindings {

simpler::ipc::Deadline deadline_after(std::optional<double> timeout_s) {
    if (!timeout_s) return simpler::ipc::NO_DEADLINE;
    if (!(*timeout_s >= 0) || *timeout_s > 1e9)
        throw std::invalid_argument("Worker.wait: timeout must be >= 0 seconds and at most 1e9 (got " +
                                    std::to_string(*timeout_s) + ")");
    return simpler::ipc::Clock::now() +
           std::chrono::duration_cast<simpler::ipc::Clock::duration>(std::chrono::duration<double>(*timeout_s));
}

void bind_engine_runs(nb::class_<Worker>& cls) {
    cls.def(
           "wait",
           [](Worker& w, std::optional<double> timeout) {
               const simpler::ipc::Deadline until = deadline_after(timeout);
               nb::gil_scoped_release release;
               return w.wait_until(until);
           },
           "timeout"_a = nb::none(),
           "Waits (spin, then futex) until every task has finished and returns True; EngineRunError (a "
           "RuntimeError) carries the first failure's report. With a timeout (seconds) returns False when tasks are "
           "still unfinished then.")
        .def("cancel_run", nb::overload_cast<const std::string&>(&Worker::cancel_run), "why"_a,
             "Ends the run early: tasks not yet started never run (one waiting on a chip's lane is withdrawn from "
             "it); those a child has begun finish there and the next wait() waits for them. Returns what it did, in "
             "words.")
        .def("cancel_run", nb::overload_cast<uint64_t, const std::string&>(&Worker::cancel_run), "run"_a, "why"_a,
             "cancel_run(why) for run `run` only: its tasks not yet started never run (nor what needs them).")
        .def("end_run", &Worker::end_run, "collected"_a,
             "Ends the run being submitted and returns its number; collected: take_finished_runs() reports it, "
             "else wait_run() does.")
        .def(
            "wait_run",
            [](Worker& w, uint64_t run, std::optional<double> timeout) {
                const simpler::ipc::Deadline until = deadline_after(timeout);
                nb::gil_scoped_release release;
                return w.wait_run(run, until);
            },
            "run"_a, "timeout"_a = nb::none(),
            "Waits until run `run` has finished, forgets it and returns True; EngineRunError carries its first "
            "failure. With a timeout (seconds) returns False while it has not finished.")
        .def(
            "take_finished_runs",
            [](Worker& w, std::optional<double> timeout) {
                const simpler::ipc::Deadline until = deadline_after(timeout);
                Worker::FinishedRuns finished;
                {
                    nb::gil_scoped_release release;
                    finished = w.take_finished_runs(until);
                }
                std::vector<std::pair<uint64_t, std::optional<simpler::FailureReport>>> runs;
                for (Worker::RunOutcome& r : finished.runs) runs.emplace_back(r.run, std::move(r.failure));
                return std::make_pair(std::move(runs), finished.closed);
            },
            "timeout"_a = nb::none(),
            "([(run, failure)], closed): the collected runs that finished (failure None for success, else its "
            "FailureReport), each forgotten; waits for one until the timeout. Once closed: every collected run "
            "left, and closed True.")
        .def(
            "begin_install",
            [](Worker& w, ChildKind kind, uint64_t callable, const std::string& name, const nb::bytes& payload) {
                const auto* p = reinterpret_cast<const std::byte*>(payload.c_str());
                return w.begin_install(kind, callable, name, {p, payload.size()});
            },
            "kind"_a, "callable"_a, "name"_a, "payload"_a,
            "Sends callable `callable` (the next id of its kind's table, named `name` in errors) to every child "
            "of `kind` as an install message carrying `payload`; returns the ticket wait_install takes. "
            "ValueError for another id, WORKER or a message the mailbox cannot hold.")
        .def(
            "wait_install",
            [](Worker& w, uint64_t ticket,
               std::optional<double> timeout) -> std::optional<std::vector<std::pair<ChildRef, std::string>>> {
                const simpler::ipc::Deadline until = deadline_after(timeout);
                std::optional<std::vector<simpler::InstallRefusal>> r;
                {
                    nb::gil_scoped_release release;
                    r = w.wait_install(ticket, until);
                }
                if (!r) return std::nullopt;
                std::vector<std::pair<ChildRef, std::string>> out;
                for (simpler::InstallRefusal& x : *r) out.emplace_back(x.child, std::move(x.why));
                return out;
            },
            "ticket"_a, "timeout"_a = nb::none(),
            "Waits until every child the install went to has answered: the (child, why) of each refusal (a child "
            "that died with it on it among them); None when the timeout (seconds) passed first. RuntimeError when "
            "close() ended the wait.")
        .def("abandon_install", &Worker::abandon_install, "ticket"_a,
             "Stops tracking an install whose waiter gave up (the children still install it).");
}

}  // namespace simpler::bindings
