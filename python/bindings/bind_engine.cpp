// Binds the engine's Worker as simpler._core.EngineWorker. Python's Worker
// (python/simpler/worker.py) composes it: it owns the registered callables and
// the Python-side dispatcher each sub-worker child calls.
//
// GIL: init() forks while holding the GIL, so each child's serving thread holds
// it for good and calls the dispatcher directly; wait() and close() release it
// while they sleep. The scheduler and watcher threads never touch Python.
// init() brackets its forks with PyOS_BeforeFork / PyOS_AfterFork_Parent, and a
// child that runs Python calls PyOS_AfterFork_Child first, as os.fork() does:
// without it a child inherits the interpreter's view of the parent's other
// Python threads (a pending GIL-drop request among it) and can wait forever
// for a thread that does not exist in the child.
//
// Tracing: EngineWorker(..., trace=True) records a TraceEvent timeline
// (src/simpler/engine/trace.h); trace_events() copies it out as read-only
// TraceEvent objects, and python/simpler/trace.py turns them into a Chrome trace.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simpler/engine/worker.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::AccessMode;
using simpler::ChildKind;
using simpler::ChildRef;
using simpler::MemberSubmit;
using simpler::TaskArgs;
using simpler::TaskHandle;
using simpler::TaskConfig;
using simpler::TaskKind;
using simpler::TraceEvent;
using simpler::TracePhase;
using simpler::Worker;
using simpler::WorkerConfig;

namespace {

// Child side: hands the task to the Python dispatcher, which returns None on
// success or the failure's text (type, message and traceback).
simpler::ipc::TaskHandler python_handler(nb::object dispatch) {
    return [dispatch](const simpler::ipc::TaskView& task) -> simpler::ipc::TaskOutcome {
        try {
            nb::bytes blob(reinterpret_cast<const char*>(task.blob.data()), task.blob.size());
            nb::bytes config(reinterpret_cast<const char*>(task.config.bytes), sizeof task.config.bytes);
            nb::object r = dispatch(task.callable_id, blob, config);
            if (r.is_none()) return {};
            return {simpler::ipc::TaskError::TASK_FAILED, nb::cast<std::string>(r)};
        } catch (const nb::python_error& e) {
            return {simpler::ipc::TaskError::TASK_FAILED, e.what()};
        }
    };
}

// None: the adaptive default policy; 0: never spin (every hand-off sleeps on a
// futex); s > 0: spin a fixed s seconds before sleeping. ValueError outside [0, 1].
simpler::ipc::SpinPolicy spin_policy_of(std::optional<double> spin_s) {
    if (!spin_s) return simpler::ipc::SpinPolicy{};
    if (!std::isfinite(*spin_s) || *spin_s < 0 || *spin_s > 1)
        throw std::invalid_argument("spin: a spin budget in seconds, 0 <= spin <= 1 (got " + std::to_string(*spin_s) +
                                    ")");
    if (*spin_s == 0) return simpler::ipc::never_spin_policy();
    return simpler::ipc::fixed_spin_policy(std::chrono::nanoseconds(static_cast<int64_t>(std::llround(*spin_s * 1e9))));
}

// A member as Python names it: worker None (a sub task: any idle sub-worker)
// or a next-level worker index, refused with ValueError when negative.
MemberSubmit member_of(const TaskArgs* args, std::optional<int64_t> worker) {
    if (worker && (*worker < 0 || *worker > int64_t{UINT32_MAX}))
        throw std::invalid_argument("worker=" + std::to_string(*worker) +
                                    ": a next-level worker index is >= 0 (None: a sub task)");
    MemberSubmit m{args, std::nullopt};
    if (worker) m.worker = static_cast<uint32_t>(*worker);
    return m;
}

TaskConfig config_of(nb::bytes b) {
    if (b.size() > simpler::TASK_CONFIG_BYTES)
        throw std::invalid_argument("call config: at most 64 bytes (got " + std::to_string(b.size()) + ")");
    TaskConfig c{};
    std::memcpy(c.data(), b.c_str(), b.size());
    return c;
}

}  // namespace

void bind_engine(nb::module_& m) {
    nb::enum_<TaskKind>(m, "TaskKind").value("NEXT_LEVEL", TaskKind::NEXT_LEVEL).value("SUB", TaskKind::SUB);
    nb::enum_<ChildKind>(m, "ChildKind")
        .value("CHIP", ChildKind::CHIP)
        .value("SUB_WORKER", ChildKind::SUB_WORKER)
        .value("WORKER", ChildKind::WORKER);
    nb::class_<ChildRef>(m, "ChildRef",
                         "Which child of a Worker: its kind and its index among the Worker's children of that kind. "
                         "name() is the spelling every error, trace lane and status line uses.")
        .def(nb::init<ChildKind, uint32_t>(), "kind"_a, "index"_a)
        .def_ro("kind", &ChildRef::kind)
        .def_ro("index", &ChildRef::index)
        .def("name", &ChildRef::name, "'chip 0', 'sub-worker 1', 'worker 2'.")
        .def("__eq__", [](const ChildRef& a, const ChildRef& b) { return a == b; })
        .def("__hash__", [](const ChildRef& c) { return static_cast<size_t>(c.kind) << 32 | c.index; })
        .def("__repr__", [](const ChildRef& c) { return "ChildRef(" + c.name() + ")"; });
    nb::class_<TaskHandle>(m, "TaskHandle",
                           "What a submit returns: the task's id within its Worker and the run it was submitted in "
                           "(runs count Worker.run() calls from 0).")
        .def(nb::init<simpler::TaskId, uint64_t>(), "id"_a, "run"_a)
        .def_ro("id", &TaskHandle::id)
        .def_ro("run", &TaskHandle::run)
        .def("name", &TaskHandle::name, "'task 3 of run 1'.")
        .def("__eq__", [](const TaskHandle& a, const TaskHandle& b) { return a == b; })
        .def("__lt__", [](const TaskHandle& a, const TaskHandle& b) { return a.id < b.id; },
             "Submit order (ids count up across runs).")
        .def("__hash__", [](const TaskHandle& t) { return std::hash<uint64_t>{}(t.id); })
        .def("__repr__", [](const TaskHandle& t) { return "TaskHandle(" + t.name() + ")"; });
    m.attr("DEFAULT_DEVICE_MEMORY_BYTES") = simpler::DEFAULT_DEVICE_HEAP_BYTES;
    m.attr("DEFAULT_TRACE_CAPACITY") = simpler::DEFAULT_TRACE_CAPACITY;

    nb::enum_<TracePhase>(m, "TracePhase").value("SUBMIT", TracePhase::SUBMIT).value("RUN", TracePhase::RUN);
    nb::class_<TraceEvent>(m, "TraceEvent",
                           "One timeline event (steady-clock ns = time.monotonic_ns()): SUBMIT when the engine "
                           "accepted a task; RUN from publishing one member to its child's mailbox to collecting "
                           "its result.")
        .def_ro("phase", &TraceEvent::phase)
        .def_ro("kind", &TraceEvent::kind)
        .def_ro("ok", &TraceEvent::ok)
        .def_ro("member", &TraceEvent::member)
        .def_ro("child", &TraceEvent::child)
        .def_ro("members", &TraceEvent::members)
        .def_ro("task", &TraceEvent::task)
        .def_ro("callable", &TraceEvent::callable)
        .def_ro("start_ns", &TraceEvent::start_ns)
        .def_ro("end_ns", &TraceEvent::end_ns)
        .def_ro("error", &TraceEvent::error)
        .def("__repr__", [](const TraceEvent& e) {
            const std::string task = e.task.name();
            if (e.phase == TracePhase::SUBMIT)
                return "TraceEvent(submit " + task + ", " + std::to_string(e.members) + " member(s) at " +
                       std::to_string(e.start_ns) + ")";
            return "TraceEvent(" + task + " member " + std::to_string(e.member) + " on " + e.child.name() + ", " +
                   std::to_string(e.start_ns) + ".." + std::to_string(e.end_ns) +
                   (e.ok ? std::string(")") : ", failed: " + e.error + ")");
        });

    nb::class_<Worker>(m, "EngineWorker",
                       "The C++ Worker: forked children fed through mailboxes by whichever thread drives them "
                       "(submit(), wait(), or a background thread between them).")
        .def("__init__",
             [](Worker* self, uint32_t num_chips, uint32_t num_sub_workers, nb::object chip_dispatch,
                nb::object sub_dispatch, double task_timeout_s, size_t blob_capacity,
                std::vector<std::string> chip_orchestrations, std::vector<std::string> chip_libraries,
                uint32_t chip_core_threads, uint64_t chip_arena_bytes, bool chip_zero_copy,
                uint64_t device_memory_bytes, bool record_edges, std::vector<std::string> sub_callable_names,
                bool trace, size_t trace_capacity, std::optional<double> spin_s) {
                 WorkerConfig c;
                 c.spin = spin_policy_of(spin_s);
                 c.num_chips = num_chips;
                 c.num_sub_workers = num_sub_workers;
                 c.blob_capacity = blob_capacity;
                 c.task_timeout = std::chrono::milliseconds(static_cast<int64_t>(task_timeout_s * 1000));
                 if (!chip_dispatch.is_none())
                     c.chip_handler = [chip_dispatch](uint32_t) {
                         PyOS_AfterFork_Child();
                         return python_handler(chip_dispatch);
                     };
                 if (!sub_dispatch.is_none())
                     c.sub_handler = [sub_dispatch](uint32_t) {
                         PyOS_AfterFork_Child();
                         return python_handler(sub_dispatch);
                     };
                 c.chip_lane.chip.orchestrations = std::move(chip_orchestrations);
                 c.chip_lane.chip.libraries = std::move(chip_libraries);
                 c.chip_lane.chip.core_threads = chip_core_threads;
                 c.chip_lane.chip.arena_bytes = chip_arena_bytes;
                 c.chip_lane.chip.staging =
                     chip_zero_copy ? simpler::chip::StagingMode::ZERO_COPY : simpler::chip::StagingMode::STAGE;
                 c.device_memory_bytes = device_memory_bytes;
                 c.record_edges = record_edges;
                 c.sub_callable_names = std::move(sub_callable_names);
                 c.trace = trace;
                 c.trace_capacity = trace_capacity;
                 new (self) Worker(std::move(c));
             },
             "num_chips"_a, "num_sub_workers"_a, "chip_dispatch"_a.none(), "sub_dispatch"_a.none(),
             "task_timeout_s"_a = 0.0, "blob_capacity"_a = simpler::ipc::DEFAULT_BLOB_CAPACITY,
             "chip_orchestrations"_a = std::vector<std::string>{}, "chip_libraries"_a = std::vector<std::string>{},
             "chip_core_threads"_a = 2, "chip_arena_bytes"_a = uint64_t{1} << 30, "chip_zero_copy"_a = false,
             "device_memory_bytes"_a = simpler::DEFAULT_DEVICE_HEAP_BYTES, "record_edges"_a = false,
             "sub_callable_names"_a = std::vector<std::string>{}, nb::kw_only(), "trace"_a = false,
             "trace_capacity"_a = simpler::DEFAULT_TRACE_CAPACITY, "spin_s"_a = nb::none(),
             "chip_dispatch: a Python handler for chip tasks (tests); None runs the simulated chips, whose "
             "callable ids index chip_orchestrations. spin_s: the spin budget of every waiter (the children "
             "and wait(); the background thread never spins) in seconds; None: adaptive (up to 25 us), 0: never spin.")
        .def(
            "init",
            [](Worker& w) {
                PyOS_BeforeFork();
                try {
                    w.init();
                } catch (...) {
                    PyOS_AfterFork_Parent();
                    throw;
                }
                PyOS_AfterFork_Parent();
            },
            "Forks every child (chips, then sub-workers), then starts the threads.")
        .def(
            "submit",
            [](Worker& w, TaskKind kind, uint64_t callable,
               const std::vector<std::pair<const TaskArgs*, std::optional<int64_t>>>& members, nb::bytes config) {
                std::vector<MemberSubmit> ms;
                for (const auto& [args, worker] : members) ms.push_back(member_of(args, worker));
                return w.submit(kind, callable, ms, config_of(config));
            },
            "kind"_a, "callable"_a, "members"_a, "config"_a,
            "Publishes a task of (TaskArgs, worker) members (worker None: a sub task); ValueError on refusal, "
            "nothing recorded.")
        .def(
            "submit_one",
            [](Worker& w, TaskKind kind, uint64_t callable, const TaskArgs& args, std::optional<int64_t> worker,
               nb::bytes config) {
                const MemberSubmit member = member_of(&args, worker);
                return w.submit(kind, callable, {&member, 1}, config_of(config));
            },
            "kind"_a, "callable"_a, "args"_a, "worker"_a.none(), "config"_a,
            "submit() of one member, without building a list (the hot path of submit_next_level / submit_sub).")
        .def("wait", &Worker::wait, nb::call_guard<nb::gil_scoped_release>(),
             "Waits (spin, then futex) until every task has finished; RuntimeError names the first failure.")
        .def("close", &Worker::close, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("initialized", &Worker::initialized)
        .def_prop_ro("closed", &Worker::closed)
        .def(
            "alloc_device",
            [](Worker& w, uint32_t chip, uint64_t nbytes, AccessMode access) {
                return w.alloc_device(chip, nbytes, access).descriptor;
            },
            "chip"_a, "nbytes"_a, "access"_a = AccessMode::READWRITE,
            "DEVICE_MALLOC memory on one chip: its descriptor (the body is the device pointer).")
        .def("release_device", &Worker::release_device, "identity"_a,
             "Refuses the block at submit from now on; frees it once every earlier task has finished.")
        .def("device_owner", &Worker::device_owner, "identity"_a, "The chip a device block lives on, or None.")
        .def(
            "device_stats",
            [](Worker& w, uint32_t chip) {
                const simpler::chip::ArenaStats s = w.device_memory().stats(chip);
                nb::dict d;
                d["capacity_bytes"] = s.capacity_bytes;
                d["bytes_in_use"] = s.bytes_in_use;
                d["live_allocations"] = s.live_allocations;
                d["largest_free_block"] = s.largest_free_block;
                return d;
            },
            "chip"_a)
        .def("take_edge_log", &Worker::take_edge_log,
             "The edges inferred since the last call, with their explanations (record_edges=True), and clears them.")
        .def("child_status", &Worker::child_status)
        .def_prop_ro("tracing", [](const Worker& w) { return w.config().trace; })
        .def("trace_events", &Worker::trace_events,
             "The timeline so far (empty unless trace=True); members still in flight are not in it yet.")
        .def("trace_dropped", &Worker::trace_dropped, "Events not stored because the trace_capacity was reached.")
        .def("trace_clear", &Worker::trace_clear, "Forgets the stored events and the dropped count.")
        .def("child_pids", [](const Worker& w) {
            std::vector<int64_t> out;
            for (pid_t p : w.child_pids()) out.push_back(p);
            return out;
        });
}
