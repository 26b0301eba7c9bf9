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
// Options: WorkerConfig, bound in bind_worker_config.cpp. EngineWorker's waits
// and run lifecycle bind in bind_engine_runs.cpp, its device memory and domains
// in bind_engine_memory.cpp (engine_binding_parts.h).
// EngineWorker(config, chip_dispatch, sub_dispatch) copies the config and adds
// the Python handlers (python_handlers.h).
//
// Tracing: EngineWorker(WorkerConfig with trace=True) records a TraceEvent timeline
// (src/simpler/engine/trace.h); trace_events() copies it out as read-only
// TraceEvent objects, and python/simpler/runtime/trace.py turns them into a Chrome trace.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "checked_args.h"
#include "engine_binding_parts.h"
#include "python_handlers.h"
#include "remote_children.h"
#include "simpler/engine/chip_install.h"
#include "simpler/engine/edge_log.h"
#include "simpler/engine/status_channel.h"
#include "simpler/engine/worker.h"
#include "simpler/ipc/process_id.h"
#include "simpler/task_interface/tiling.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::ChildKind;
using simpler::ChildRef;
using simpler::MemberSubmit;
using simpler::TaskArgs;
using simpler::TaskArgsBatch;
using simpler::TaskConfig;
using simpler::TaskHandle;
using simpler::TaskKind;
using simpler::TraceEvent;
using simpler::TracePhase;
using simpler::Worker;
using simpler::WorkerConfig;
using simpler::bindings::bind_engine_memory;
using simpler::bindings::bind_engine_runs;
using simpler::bindings::deadline_after;
using simpler::bindings::IntArg;
using simpler::bindings::next_level_worker_handler;
using simpler::bindings::obj_of;
using simpler::bindings::ObjArg;
using simpler::bindings::python_forget;
using simpler::bindings::python_handler;
using simpler::bindings::python_install;

// bind_worker_config.cpp: WorkerConfig and ChipLaneConfig.
void bind_worker_config(nb::module_& m);

namespace {

// A member as Python names it: worker None (a sub task: any idle sub-worker)
// or a next-level worker index: ValueError when negative or past u32,
// TypeError when not an int (a bool is not one).
MemberSubmit member_of(const TaskArgs* args, const std::optional<IntArg>& worker) {
    MemberSubmit m{args, std::nullopt};
    if (!worker) return m;
    PyObject* p = worker->h.ptr();
    int overflow = 0;
    const long long x = PyLong_Check(p) && !PyBool_Check(p) ? PyLong_AsLongLongAndOverflow(p, &overflow) : 0;
    if (overflow < 0 || x < 0)
        throw std::invalid_argument("worker=" + simpler::bindings::repr_of(worker->h) +
                                    ": a next-level worker index is >= 0 (None: a sub task)");
    m.worker = static_cast<uint32_t>(simpler::bindings::uint_of(worker->h, "worker", -1, UINT32_MAX, "must fit u32"));
    return m;
}

// The tasks of submit_many: a TaskArgsBatch's (a tiling's built one at a time
// into scratch, never all held) or a list's TaskArgs; no worker, one for all,
// or one per task.
class BatchOfArgs final : public simpler::BatchSource {
public:
    BatchOfArgs(const TaskArgsBatch* batch, std::span<const TaskArgs* const> list) : batch_(batch), list_(list) {}
    void worker_for_all(std::optional<uint32_t> w) { member_.worker = w; }
    void worker_for_each(std::vector<std::optional<uint32_t>> each) { each_ = std::move(each); }

    [[nodiscard]] size_t size() const noexcept override { return batch_ ? batch_->size() : list_.size(); }
    const MemberSubmit& task(size_t i) override {
        member_.args = batch_ ? &batch_->at(i, scratch_) : list_[i];
        if (!each_.empty()) member_.worker = each_[i];
        return member_;
    }

private:
    const TaskArgsBatch* batch_;
    std::span<const TaskArgs* const> list_;
    std::vector<std::optional<uint32_t>> each_;
    MemberSubmit member_;
    TaskArgs scratch_;
};

TaskConfig config_of(const nb::bytes& b) {
    if (b.size() > sizeof(TaskConfig))
        throw std::invalid_argument("call config: at most 64 bytes (got " + std::to_string(b.size()) + ")");
    TaskConfig c{};
    std::memcpy(&c, b.c_str(), b.size());
    return c;
}

}  // namespace

void bind_engine(nb::module_& m) {
    m.def(
        "wait_status_channel",
        [](uint64_t channel, uint64_t seen, std::optional<double> timeout) -> std::optional<uint64_t> {
            const simpler::ipc::Deadline until = deadline_after(timeout);
            std::shared_ptr<simpler::StatusChannel> c = simpler::StatusChannel::find(channel);
            if (!c) return std::nullopt;
            nb::gil_scoped_release release;
            return c->wait(seen, until);
        },
        "channel"_a, "seen"_a, "timeout"_a = nb::none(),
        "Waits (the GIL released, holding no Python object) until the status of the Worker whose "
        "EngineWorker.status_channel is `channel` moved past serial `seen`, or timeout seconds; returns the serial "
        "then, or None once that Worker closed.");
    m.def(
        "close_status_channel",
        [](uint64_t channel) {
            if (std::shared_ptr<simpler::StatusChannel> c = simpler::StatusChannel::find(channel)) c->close();
        },
        "channel"_a,
        "Closes a status channel early (at interpreter exit, so a thread waiting on it returns before the "
        "interpreter goes): wait_status_channel returns None from then on.");
    m.def("current_process_id", &simpler::ipc::current_process_id,
          "This process's id without a system call (os.getpid() is one: ~150 ns): cached, and refreshed in "
          "every child forked through fork(), the children a Worker forks in C++ included.");
    m.def(
        "chip_install_payload",
        [](const std::string& orchestration, const std::string& library) {
            const std::vector<std::byte> b = simpler::encode_chip_install({orchestration, library});
            return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
        },
        "orchestration"_a, "library"_a,
        "The install payload of a chip callable: chip orchestration `orchestration` of shared library `library` "
        "('': the standard set).");
    nb::enum_<TaskKind>(m, "TaskKind",
                        "What a callable is run as: NEXT_LEVEL (a chip orchestration, or a next-level Worker's "
                        "orchestration function) or SUB (a Python sub-worker callable).")
        .value("NEXT_LEVEL", TaskKind::NEXT_LEVEL)
        .value("SUB", TaskKind::SUB);
    nb::enum_<ChildKind>(m, "ChildKind",
                         "The kinds of a Worker's children: CHIP, SUB_WORKER, WORKER (a next-level Worker).")
        .value("CHIP", ChildKind::CHIP)
        .value("SUB_WORKER", ChildKind::SUB_WORKER)
        .value("WORKER", ChildKind::WORKER);
    nb::class_<ChildRef>(m, "ChildRef",
                         "Which child of a Worker: its kind and its index among the Worker's children of that kind. "
                         "name() is the spelling every error, trace lane and status line uses.")
        .def(nb::init<ChildKind, uint32_t>(), "kind"_a, "index"_a)
        .def_ro("kind", &ChildRef::kind, "CHIP, SUB_WORKER or WORKER.")
        .def_ro("index", &ChildRef::index, "Its index among the Worker's children of that kind.")
        .def("name", &ChildRef::name, "'chip 0', 'sub-worker 1', 'worker 2'.")
        .def(
            "__eq__", [](const ChildRef& a, const ChildRef& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def("__hash__", [](const ChildRef& c) { return static_cast<size_t>(c.kind) << 32 | c.index; })
        .def("__repr__", [](const ChildRef& c) { return "ChildRef(" + c.name() + ")"; });
    nb::class_<TaskHandle>(m, "TaskHandle",
                           "What a submit returns: the task's id within its Worker and the run it was submitted in "
                           "(runs count Worker.run() and Worker.submit() calls from 0).")
        .def(nb::init<simpler::TaskId, uint64_t>(), "id"_a, "run"_a)
        .def_ro("id", &TaskHandle::id, "The task's id within its Worker, counting up across its runs.")
        .def_ro("run", &TaskHandle::run, "The run it was submitted in (the Worker's runs count from 0).")
        .def("name", &TaskHandle::name, "'task 3 of run 1'.")
        .def(
            "__eq__", [](const TaskHandle& a, const TaskHandle& b) { return a == b; }, nb::is_operator(),
            nb::sig(simpler::bindings::EQ_SIGNATURE))
        .def(
            "__lt__", [](const TaskHandle& a, const TaskHandle& b) { return a.id < b.id; },
            "Submit order (ids count up across runs).")
        .def("__hash__", [](const TaskHandle& t) { return std::hash<uint64_t>{}(t.id); })
        .def("__repr__", [](const TaskHandle& t) { return "TaskHandle(" + t.name() + ")"; });
    bind_worker_config(m);  // here, so the stub keeps its order
    simpler::bindings::bind_failure_report(m);

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
        .def_ro("waits_on", &TraceEvent::waits_on,
                "RUN: the ids of the producers on other chips (tasks of the same run) this member waited for on "
                "its own chip; else empty.")
        .def("__repr__", [](const TraceEvent& e) {
            const std::string task = e.task.name();
            if (e.phase == TracePhase::SUBMIT)
                return "TraceEvent(submit " + task + ", " + std::to_string(e.members) + " member(s) at " +
                       std::to_string(e.start_ns) + ")";
            return "TraceEvent(" + task + " member " + std::to_string(e.member) + " on " + e.child.name() + ", " +
                   std::to_string(e.start_ns) + ".." + std::to_string(e.end_ns) +
                   (e.ok ? std::string(")") : ", failed: " + e.error + ")");
        });

    nb::class_<simpler::EdgeLog>(m, "EdgeLog",
                                 "What EngineWorker.take_edge_log hands over: the edges kept (at most "
                                 "WorkerConfig.edge_log_capacity) and how many more were inferred.")
        .def_ro("edges", &simpler::EdgeLog::edges, "The EdgeExplanations kept, in submit order.")
        .def_ro("dropped", &simpler::EdgeLog::dropped, "Edges inferred after the capacity was reached, not kept.");

    nb::class_<simpler::ChildStatus>(m, "ChildStatus",
                                     "What a Worker says of one child (Worker.child_status): lost or usable, why, "
                                     "and what a next-level Worker child reported lost below it.")
        .def_ro("child", &simpler::ChildStatus::child, "The child (a ChildRef).")
        .def_ro("lost", &simpler::ChildStatus::lost, "Whether it is lost for good.")
        .def_ro("why", &simpler::ChildStatus::why, "How it was lost ('' while it is usable).")
        .def_ro("below_lost", &simpler::ChildStatus::below_lost,
                "A usable next-level Worker child: how many children it reported lost below it.")
        .def_ro("below", &simpler::ChildStatus::below, "... and which ('chip 1: lost (...)'; '; ' between them).")
        .def("__str__", &simpler::ChildStatus::line, "The line people read ('chip 1: lost (...)').")
        .def("__repr__", [](const simpler::ChildStatus& s) { return "ChildStatus(" + s.line() + ")"; });

    nb::class_<Worker> cls(m, "EngineWorker",
                           "The C++ Worker: forked children fed through mailboxes by whichever thread drives them "
                           "(submit(), wait(), or a background thread between them).");
    cls.def(
           "__init__",
           [](Worker* self, const WorkerConfig& config, const nb::object& chip_dispatch, const nb::object& sub_dispatch,
              const nb::object& worker_start, const RemoteChildren* remote, const nb::object& sub_install) {
               WorkerConfig c = config;
               if (remote != nullptr) {
                   c.num_relay_workers = remote->count;
                   c.relay_handler = remote->factory;
               }
               if (!chip_dispatch.is_none())
                   c.chip_handler = [chip_dispatch](uint32_t) {
                       PyOS_AfterFork_Child();
                       return simpler::ChildHandlers{python_handler(chip_dispatch), python_forget()};
                   };
               if (!sub_dispatch.is_none())
                   c.sub_handler = [sub_dispatch, sub_install](uint32_t) {
                       PyOS_AfterFork_Child();
                       return simpler::ChildHandlers{
                           python_handler(sub_dispatch), python_forget(),
                           sub_install.is_none() ? simpler::InstallHandler{} : python_install(sub_install)};
                   };
               if (!worker_start.is_none())
                   c.worker_handler = [worker_start](uint32_t index) {
                       PyOS_AfterFork_Child();
                       return next_level_worker_handler(worker_start, index);
                   };
               new (self) Worker(std::move(c));
           },
           "config"_a, "chip_dispatch"_a.none() = nb::none(), "sub_dispatch"_a.none() = nb::none(),
           "worker_start"_a.none() = nb::none(), "remote"_a.none() = nb::none(), "sub_install"_a.none() = nb::none(),
           "Validates config (ValueError) and builds the Worker; nothing runs before init(). chip_dispatch: a "
           "Python handler for chip tasks (tests); None runs the simulated chips, whose callable ids index "
           "config.chip_lane.chip.orchestrations. sub_dispatch: the handler each sub-worker child calls. "
           "worker_start(index) -> (dispatch, close): called in next-level Worker child `index` right after its "
           "fork; it starts that child's Worker, dispatch runs each task there, close() runs when the child is "
           "told to stop. remote: the last next-level children live in other MPI ranks (RemoteChildren). "
           "sub_install(callable_id, payload) -> None or why: each sub-worker child's handler of install messages "
           "(begin_install).")
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
               const std::vector<std::pair<const TaskArgs*, std::optional<IntArg>>>& members, const nb::bytes& config) {
                std::vector<MemberSubmit> ms;
                for (const auto& [args, worker] : members) ms.push_back(member_of(args, worker));
                return w.submit(kind, callable, ms, config_of(config));
            },
            "kind"_a, "callable"_a, "members"_a, "config"_a,
            "Publishes a task of (TaskArgs, worker) members (worker None: a sub task); ValueError on refusal, "
            "nothing recorded.")
        .def(
            "submit_one",
            [](Worker& w, TaskKind kind, uint64_t callable, ObjArg<TaskArgs> args, std::optional<IntArg> worker,
               const nb::bytes& config) {
                const MemberSubmit member = member_of(&obj_of(args, "args"), worker);
                return w.submit(kind, callable, {&member, 1}, config_of(config));
            },
            "kind"_a, "callable"_a, "args"_a, "worker"_a.none(), "config"_a,
            nb::sig("def submit_one(self, kind: TaskKind, callable: int, args: TaskArgs, worker: int | None, "
                    "config: bytes) -> TaskHandle"),
            "submit() of one member, without building a list (the hot path of submit_next_level / submit_sub).")
        .def(
            "submit_many",
            [](Worker& w, TaskKind kind, uint64_t callable, const nb::handle& args, const nb::handle& workers,
               const nb::bytes& config) {
                const TaskArgsBatch* batch = nullptr;
                std::vector<const TaskArgs*> list_args;
                if (nb::isinstance<TaskArgsBatch>(args)) {
                    batch = &nb::cast<const TaskArgsBatch&>(args);
                } else {
                    const nb::list list = nb::cast<nb::list>(args);  // the caller passes a list
                    list_args.reserve(list.size());
                    for (size_t i = 0; i < list.size(); ++i) {
                        const TaskArgs* a = nullptr;
                        if (!nb::try_cast<const TaskArgs*>(list[i], a) || a == nullptr)
                            throw nb::type_error(("args_list[" + std::to_string(i) + "]: expected a TaskArgs (got " +
                                                  simpler::bindings::repr_of(list[i]) + ")")
                                                     .c_str());
                        list_args.push_back(a);
                    }
                }
                BatchOfArgs tasks(batch, list_args);
                if (PyLong_Check(workers.ptr()) && !PyBool_Check(workers.ptr())) {
                    tasks.worker_for_all(member_of(nullptr, IntArg{workers}).worker);
                } else if (!workers.is_none()) {
                    const nb::list list = nb::cast<nb::list>(workers);  // the caller passes a list
                    if (list.size() != tasks.size())
                        throw std::invalid_argument(std::to_string(tasks.size()) + " argument lists but " +
                                                    std::to_string(list.size()) + " workers");
                    std::vector<std::optional<uint32_t>> each(list.size());
                    for (size_t i = 0; i < list.size(); ++i) each[i] = member_of(nullptr, IntArg{list[i]}).worker;
                    tasks.worker_for_each(std::move(each));
                }
                simpler::TaskHandles handles;
                const std::optional<Worker::BatchRefusal> refused =
                    w.submit_many(kind, callable, tasks, config_of(config), handles);
                return nb::make_tuple(handles, refused ? static_cast<int64_t>(refused->index) : int64_t{-1},
                                      refused ? refused->why : std::string());
            },
            "kind"_a, "callable"_a, "args"_a, "workers"_a.none(), "config"_a,
            nb::sig("def submit_many(self, kind: TaskKind, callable: int, args: TaskArgsBatch | list[TaskArgs], "
                    "workers: int | list[int] | None, config: bytes) -> tuple[TaskHandles, int, str]"),
            "N one-member tasks in one call (Worker::submit_many): workers None (sub tasks), one index for all, "
            "or a list (one per task). Returns (the handles, -1, '') or, when a task is refused, (no handles, its "
            "index, the engine's reason): every task is checked before any is recorded. The GIL is held: the TaskArgs "
            "are Python objects another thread could change.");
    bind_engine_runs(cls);
    cls.def(
           "forget", [](Worker& w, const std::vector<simpler::CanonicalIdentity>& ids) { w.forget(ids); },
           "identities"_a,
           "Sends every lane a forget of these identities (their owner freed them); a nested Worker passes on "
           "the forgets its parent sends it this way.")
        .def("room", &Worker::room,
             "How many tasks may be submitted now: WorkerConfig.max_unfinished less the unfinished ones (2**64 - 1 "
             "without a limit).")
        .def("await_room", &Worker::await_room, nb::call_guard<nb::gil_scoped_release>(),
             "Waits, the GIL released, until room() > 0; RuntimeError when close() ends the wait. A submit waits so "
             "itself, the GIL held: the Orchestrator calls this first so the program's other threads run meanwhile.")
        .def("close", &Worker::close, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("initialized", &Worker::initialized)
        .def_prop_ro("closed", &Worker::closed);
    bind_engine_memory(cls);
    cls.def("take_edge_log", &Worker::take_edge_log,
            "The edges inferred since the last call, with their explanations (record_edges=True), and how many "
            "were not kept (edge_log_capacity); clears them.")
        .def("child_status", &Worker::child_status, "One line per child: child_states() as text.")
        .def("child_states", &Worker::child_states, "One ChildStatus per child, lane by lane.")
        .def_prop_ro("status_channel", &Worker::status_channel,
                     "The id of the channel wait_status_channel() waits on: it moves when a child is lost here or "
                     "below a next-level child, and closes with the Worker.")
        .def_prop_ro("tracing", [](const Worker& w) { return w.config().trace; })
        .def("trace_events", &Worker::trace_events,
             "The timeline so far (empty unless trace=True); members still in flight are not in it yet.")
        .def("trace_dropped", &Worker::trace_dropped, "Events not stored because the trace_capacity was reached.")
        .def("trace_clear", &Worker::trace_clear, "Forgets the stored events and the dropped count.")
        .def(
            "progress",
            [](const Worker& w) {
                const simpler::WorkerProgress p = w.progress();
                nb::list children;
                for (const simpler::ChildProgress& c : p.children) {
                    nb::dict d;
                    d["name"] = c.name;
                    d["done"] = c.done;
                    d["running"] = c.running;
                    d["lost"] = c.lost;
                    children.append(d);
                }
                nb::dict d;
                d["submitted"] = p.submitted;
                d["unfinished"] = p.unfinished;
                d["lost"] = p.lost;
                d["children"] = children;
                return d;
            },
            "What has been submitted and finished, and per child what it finished and whether a task runs "
            "on it now: {'submitted', 'unfinished', 'lost', 'children': [{'name', 'done', 'running', 'lost'}]}.")
        .def_prop_ro("lost_count", &Worker::lost_count, "Children lost since init() (cheap: no lock).")
        .def("child_pids",
             [](const Worker& w) {
                 std::vector<int64_t> out;
                 for (pid_t p : w.child_pids()) out.push_back(p);
                 return out;
             })
        .def("device_facts", &Worker::device_facts, "chip"_a, nb::call_guard<nb::gil_scoped_release>(),
             "The DeviceFacts of the device chip `chip` opened, as the chip tells it (waits while it starts). "
             "IndexError for no such chip; RuntimeError when it could not start or was lost first.");
}
