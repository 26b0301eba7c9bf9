"""Worker: one level of the hierarchy (L3 host and above) as running processes.

    w = Worker(level=3, num_chips=2, num_sub_workers=2)
    vadd = w.register(ChipCallable("std.vector_add"))  # a chip orchestration (C++)
    post = w.register(python_fn)      # a sub-worker callable: fn(args: MappedArgs)
    w.init()                          # forks every child before any thread exists
    a = w.create_buffer(n * 4)
    w.run(my_orch)                    # my_orch(orch, args, cfg) only builds the graph
    w.close()                         # also a context manager

A level-4 (or higher) Worker's next level is Workers one level down:

    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=2))     # forked and started by w4.init()
    tile = w4.register(l3_fn)         # l3_fn(orch3, args, cfg) runs as one run of the child
    w4.init()
    w4.run(lambda o, a, c: o.submit_next_level(tile, ta, worker=0))

The child side (forwarding, the forwarded views' bound, failure paths) is
simpler.nested.

Worker(..., trace=True) records a timeline of every run: write_trace(path)
writes it as a Chrome trace (see simpler.trace), trace_events() returns it.

How long a waiting thread or child spins before it sleeps on a futex is
`spin`: None (the default) adapts to the observed hand-off times, up to 25 us;
0 never spins (every hand-off wakes a sleeper: 10-40 us here, no CPU spent
spinning); a number of seconds spins that long every time (the hot regime, for
latency-bound runs). Nothing spins while the Worker is idle beyond that budget.

Callables registered before init() are known to the children forked then; on
a running level-3 Worker, register() installs a new callable in every child of
its kind before it returns (simpler.late_register). run() returns when every
task of its run has finished, or raises RuntimeError naming the first failure
(task, worker, cause). submit() is run() without the wait: it returns a
RunFuture at once, and several runs may be in flight (simpler.run_future).

Chips are forked processes, one each (docs/chip.md), driving the simulated device
(the default) or, with `device="opencl"`, an OpenCL device each (chip i takes
device i modulo those found on the platforms whose name contains
`device_platform`; init() refuses clearly when there is none; SIMPLER_DEVICE sets
the default of `device`, so a program runs with the device switched): `chip_core_threads`
kernel threads, `chip_arena_bytes` of device memory for staged copies,
`device_memory_bytes` per chip for `alloc_child_tensor`, `window_heap_bytes` per
chip for the windows of `allocate_domain` (shared between the chip processes),
and `zero_copy` to run on host arguments in place instead of staging them (a
task's CallConfig can ask for zero-copy too).

Every option lands in a WorkerConfig (the C++ struct, bound): a keyword left
None keeps the struct's default, and the struct validates (ValueError naming
the field). A keyword sets the WorkerConfig field of its name, or the field
_RENAMED names; Worker.config is the result.
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from simpler import late_register, remote
from simpler._core import (
    ChildKind,
    DataType,
    DeviceKind,
    EngineWorker,
    StagingMode,
    TaskKind,
    TraceEvent,
    WorkerConfig,
    create_fork_shm,
    create_posix_shm,
    current_process_id,
    element_size,
    intern_owner_path,
)
from simpler.arg_checks import check_bool, check_int, check_shape, check_type, got, text
from simpler.buffer import AccessMode, Buffer, SharedTensor, create_buffer
from simpler.callable_handle import CallableHandle
from simpler.chip_callable import ChipCallable, check_orchestrations
from simpler.global_domain import collective_phase
from simpler.log import ChildWatch, logger
from simpler.nested import ForwardedScope, child_name, start_child, with_path
from simpler.orchestrator import Orchestrator
from simpler.progress import Progress, snapshot
from simpler.run_future import RunFuture, RunQueue
from simpler.share import share as share_memory
from simpler.sub_worker import make_dispatcher
from simpler.trace import ProcessTimeline, TreeTrace, chrome_trace, write_chrome_trace

# The devices a chip may drive, by the name the `device` keyword takes.
_DEVICE_KINDS = {"simulated": DeviceKind.SIMULATED, "opencl": DeviceKind.OPENCL}

# Worker keywords named otherwise than their WorkerConfig field: the field's
# dotted path and how the keyword's value becomes the field's.
_RENAMED: dict[str, Tuple[str, Callable[[Any], Any]]] = {
    "chip_core_threads": ("chip_lane.chip.runtime.core_threads", operator.index),
    "chip_arena_bytes": ("chip_lane.chip.arena_bytes", operator.index),
    "zero_copy": ("chip_lane.chip.staging", lambda z: StagingMode.ZERO_COPY if z else StagingMode.STAGE),
    "device": ("chip_lane.chip.device.kind", lambda d: _DEVICE_KINDS[d]),
    "device_platform": ("chip_lane.chip.device.platform", str),
}


# The keywords whose value is not of the type the field holds: a bool for
# zero_copy, seconds (int or float) for spin and task_timeout (None: default),
# a device's name for device.
_BOOL_KEYWORDS = {"zero_copy"}
_SECONDS_KEYWORDS = {"spin", "task_timeout"}
_TEXT_KEYWORDS = {"device", "device_platform"}


def _checked_option(name: str, path: str, value: Any, current: Any) -> Any:
    """`value` for keyword `name` (field `path`) when its type is the field's:
    TypeError naming both otherwise (a bool is not an int, 1 is not a bool, a
    float is not a count)."""
    field = f"WorkerConfig.{path}"
    try:
        if name in _BOOL_KEYWORDS or (name not in _SECONDS_KEYWORDS and isinstance(current, bool)):
            return check_bool(field, value)
        if name in _TEXT_KEYWORDS:
            if not isinstance(value, str):
                raise TypeError(f"Worker.{name}: expected str (got {got(value)})")
            if name == "device" and value not in _DEVICE_KINDS:
                raise ValueError(f"Worker.device: {value!r} is not one of {', '.join(map(repr, _DEVICE_KINDS))}")
            return value
        if name in _SECONDS_KEYWORDS:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{field}: expected a number of seconds (got {got(value)})")
            return value
        if isinstance(current, int):
            return check_int(field, value, minimum=None)
    except TypeError as e:
        raise TypeError(f"{e} ({name}={value!r})") from None
    return value


# Each Worker's serial, which its CallableHandles carry.
_worker_serials = itertools.count(1)
# How many chip callables every Worker has before any register(): the runtime's own (std.copy, std.sum_n).
_RUNTIME_CHIP_CALLABLES = 2


def _as_is(value: Any) -> Any:
    return value


def _callable_name(fn: Callable) -> str:
    """What errors and traces call a sub-worker callable: its __qualname__ (or
    repr), with what UTF-8 cannot encode escaped, so it can cross into C++."""
    name = getattr(fn, "__qualname__", None)
    return text(name if isinstance(name, str) else repr(fn))


def worker_config(**options: Any) -> WorkerConfig:
    """A validated WorkerConfig with each option that is not None set (ValueError
    naming the field for a value its field refuses or cannot hold)."""
    config = WorkerConfig()
    for name, value in options.items():
        if value is None:
            continue
        path, convert = _RENAMED.get(name, (name, _as_is))
        *parents, field = path.split(".")
        target = config
        for p in parents:
            target = getattr(target, p)
        if not hasattr(target, field):
            raise TypeError(f"Worker: no option {name!r}")
        value = _checked_option(name, path, value, getattr(target, field))
        try:
            setattr(target, field, convert(value))
        except ValueError as e:
            # The binding's refusal of an int its field cannot hold names the field, not the option.
            if str(e).startswith(f"{type(target).__name__}.{field}: out of range for this field"):
                raise ValueError(f"WorkerConfig.{path}: {value} does not fit the field ({name}={value})") from None
            raise
    try:
        config.validate()
    except ValueError as e:
        raise ValueError(_as_option(str(e), options)) from None
    return config


def _as_option(message: str, options: Dict[str, Any]) -> str:
    """A WorkerConfig refusal reworded to name the keyword the user passed, when
    the refused field is one a keyword of another name set ("Worker.chip_arena_bytes:
    must be > 0 (got 0) (WorkerConfig.chip_lane.chip.arena_bytes)")."""
    for name, (path, _convert) in _RENAMED.items():
        field = f"WorkerConfig.{path}:"
        if options.get(name) is not None and message.startswith(field):
            return f"Worker.{name}:{message[len(field):]} ({field[:-1]})"
    return message


# How often a waiting run() returns to the interpreter, so that Ctrl-C (a Python
# signal handler runs only between bytecodes of the main thread) is seen promptly.
_WAIT_SLICE_S = 0.05


def _cancel(core: EngineWorker, run: int, interrupt: BaseException) -> None:
    what = core.cancel_run(run, "run() was interrupted (KeyboardInterrupt)")
    if not what:
        return
    note = f"Worker.run interrupted: {what}"
    add_note = getattr(interrupt, "add_note", None)  # Python >= 3.11
    if add_note is not None:
        add_note(note)
    elif not interrupt.args:
        interrupt.args = (note,)


def _wait(core: EngineWorker, run: int) -> None:
    """core.wait_run(run) in slices, so that a KeyboardInterrupt reaches Worker.run promptly."""
    while not core.wait_run(run, _WAIT_SLICE_S):
        pass


_B = TypeVar("_B", bound=Buffer)

# The highest level a Worker takes: a tree of host (3), pod (4) and up to four levels of pods above.
MAX_LEVEL = 8


class Worker:
    def __init__(self, level: int = 3, num_chips: Optional[int] = None, num_sub_workers: Optional[int] = None, *,
                 task_timeout: Optional[float] = None, blob_capacity: Optional[int] = None,
                 chip_core_threads: Optional[int] = None, chip_arena_bytes: Optional[int] = None,
                 device_memory_bytes: Optional[int] = None, window_heap_bytes: Optional[int] = None,
                 zero_copy: Optional[bool] = None, device: Optional[str] = None,
                 device_platform: Optional[str] = None,
                 record_edges: Optional[bool] = None, trace: Optional[bool] = None,
                 trace_capacity: Optional[int] = None, spin: Optional[float] = None):
        level = check_int("Worker.level", level, minimum=None)
        if not 3 <= level <= MAX_LEVEL:
            raise ValueError(f"Worker(level={level}): a Worker is level 3 (a host) to {MAX_LEVEL}; level 2 is a chip, "
                             "level 4 a pod of hosts, and each level above drives Workers of the one below")
        if level > 3 and num_chips:
            raise ValueError(f"Worker(level={level}, num_chips={num_chips}): the next level of a level-{level} Worker "
                             f"is level-{level - 1} Workers (add_worker), not chips; chips belong to level-3 Workers")
        if device is None and os.environ.get("SIMPLER_DEVICE"):
            device = os.environ["SIMPLER_DEVICE"]
            if device not in _DEVICE_KINDS:
                raise ValueError(f"SIMPLER_DEVICE={device!r} (the default of Worker.device) is not one of "
                                 f"{', '.join(map(repr, _DEVICE_KINDS))}")
        self._config = worker_config(
            num_chips=num_chips, num_sub_workers=num_sub_workers, task_timeout=task_timeout,
            blob_capacity=blob_capacity, chip_core_threads=chip_core_threads, chip_arena_bytes=chip_arena_bytes,
            device_memory_bytes=device_memory_bytes, window_heap_bytes=window_heap_bytes, zero_copy=zero_copy,
            device=device, device_platform=device_platform,
            record_edges=record_edges, trace=trace, trace_capacity=trace_capacity, spin=spin)
        self.level = level
        self.num_chips = self._config.num_chips
        self.num_sub_workers = self._config.num_sub_workers
        self._sub_callables: List[Callable] = []
        # Orchestration functions fn(orch, args, cfg) that next-level Workers run (level 4 and above).
        self._orchestrations: List[Callable] = []
        self._children: List[Worker] = []  # next-level Workers (add_worker)
        # Remote next-level Workers (add_remote_workers): the options of each, children after the local ones.
        self._remote: List[Dict[str, Any]] = []
        self._heartbeat_timeout = remote.DEFAULT_HEARTBEAT_TIMEOUT_S
        self._parent: Optional[Worker] = None  # the Worker this one was added to
        # How failure paths and repr name this Worker: 'L4' at the top, 'L3[0]' as child 0 of an L4.
        self.path_name = f"L{level}"
        self.path = self.path_name  # from the top: 'L4/L3[0]'
        self._tree_trace: Optional[TreeTrace] = None  # traced, with Workers below: where they leave their timelines
        self._tree_below: List[ProcessTimeline] = []  # their timelines, kept at close()
        # Chip callables 0 and 1 are the runtime's own: std.copy, behind orch.copy_to / copy_from and the
        # collectives' copies, and std.sum_n, the collectives' reductions (simpler.collectives).
        self._chip_callables: List[ChipCallable] = [ChipCallable("std.copy"), ChipCallable("std.sum_n")]
        assert len(self._chip_callables) == _RUNTIME_CHIP_CALLABLES
        self._serial = next(_worker_serials)
        self._copy_handle = CallableHandle(0, ChildKind.CHIP, "std.copy", self._serial)
        self._sum_handle = CallableHandle(1, ChildKind.CHIP, "std.sum_n", self._serial)
        # A level-4 Worker with global windows: the runtime's own orchestration behind the collectives over a
        # GlobalDomain (registered last at init(), so the user's ids do not move).
        self._phase_handle: Optional[CallableHandle] = None
        self._global_first_slot: List[int] = []  # by local child: the member slot of its chip 0
        self._forking_core: Optional[EngineWorker] = None  # during init(): what the children inherit
        self._core: Optional[EngineWorker] = None
        self._watch = ChildWatch()  # logs the children's start and losses (simpler.log)
        self._buffers: List[Buffer] = []
        self._pid = os.getpid()
        self._runs = RunQueue(self)  # runs asked for and not yet built; submitted runs in flight
        self._register_lock = threading.Lock()  # a register() after init() takes the next id under it
        # _runs_on of each TaskKind, built once: every run's Orchestrator reads it (the level never changes).
        self._runs_on_by_kind = {k: self._runs_on(k) for k in (TaskKind.NEXT_LEVEL, TaskKind.SUB)}

    # -- set-up ---------------------------------------------------------------
    @property
    def config(self) -> WorkerConfig:
        """The WorkerConfig this Worker runs with (at init(), the registered
        callables' names are added to it, and by each register() after it)."""
        return self._config

    def register(self, fn: Union[ChipCallable, Callable[..., None], str],
                 kind: Optional[TaskKind] = None) -> CallableHandle:
        """Registers a callable and returns the handle a task names it by:
        - a ChipCallable: a chip orchestration, run by submit_next_level on a
          level-3 Worker's chips (registered on a level-4 or higher Worker, it
          is run by the level-3 Workers below it);
        - on a level-3 Worker, a Python callable `fn(args: MappedArgs)`: a
          sub-worker callable, run by submit_sub;
        - on a level-4 or higher Worker, a Python callable `fn(orch, args, cfg)`:
          an orchestration function, run by submit_next_level as one run of a
          next-level Worker child (and by the Workers below, by the same handle);
          kind=TaskKind.SUB registers a sub-worker callable instead.
        A string "pkg.module:fn" registers the Python callable at that import
        path, resolved at init() in every process that runs it (a remote
        Worker's callables must be named so, or be module-level functions).
        Register on the top Worker: every Worker below it knows what it
        registered, by the same handles. A level-4 or higher Worker takes
        registrations before init() only. On a running level-3 Worker,
        register() installs the callable in every chip (a ChipCallable) or
        every sub-worker (a Python callable: by import path, or pickled, so a
        module-level function) and returns the handle once each has it;
        RuntimeError naming each child that could not install it, and why
        (simpler.late_register). It may run while a run is in flight, from
        another thread or from the orchestration function."""
        self._check_process("register")
        if self._parent is not None:
            raise RuntimeError(f"Worker.register: this Worker is {self.path}, a child of another Worker; register on "
                               "the top Worker (every Worker below it knows the same callables)")
        running = self._core is not None
        if running:
            self._running()  # refuses on a closed Worker
            if self.level > 3:
                raise RuntimeError(f"Worker.register: {self.path} is a level-{self.level} Worker, whose tree was "
                                   "started at init() with the callables registered before it; register before "
                                   "init() (a level-3 Worker takes callables after init())")
        if kind is not None:
            check_type("Worker.register.kind", kind, TaskKind)
        if isinstance(fn, ChipCallable):
            if kind == TaskKind.SUB:
                raise ValueError(f"Worker.register: a ChipCallable ({fn.orchestration!r}) runs on a chip, not on a "
                                 "sub-worker (kind=TaskKind.SUB)")
            check_orchestrations([*self._chip_callables, fn])
            if running:
                return late_register.register_chip(self, fn)
            self._chip_callables.append(fn)
            return CallableHandle(len(self._chip_callables) - 1, ChildKind.CHIP, fn.orchestration, self._serial)
        if isinstance(fn, str):
            fn = remote.PathCallable(fn)
        if not callable(fn):
            raise TypeError(f"Worker.register: {fn!r} is neither a ChipCallable, a callable nor an import path")
        if kind is None:
            kind = TaskKind.NEXT_LEVEL if self.level > 3 else TaskKind.SUB
        if kind == TaskKind.NEXT_LEVEL:
            if self.level == 3:
                raise ValueError(f"Worker.register: the next level of a level-3 Worker is chips; a Python callable "
                                 f"({_callable_name(fn)}) runs on its sub-workers (kind=TaskKind.SUB), a chip "
                                 "orchestration is a ChipCallable")
            self._orchestrations.append(fn)
            return CallableHandle(len(self._orchestrations) - 1, ChildKind.WORKER, _callable_name(fn), self._serial)
        if running:
            return late_register.register_sub(self, fn, _callable_name(fn))
        self._sub_callables.append(fn)
        return CallableHandle(len(self._sub_callables) - 1, ChildKind.SUB_WORKER, _callable_name(fn), self._serial)

    def add_worker(self, child: "Worker") -> int:
        """Adds level-(N-1) Worker `child` as a next-level child of this level-N
        Worker (N >= 4) and returns its index (the `worker=` of submit_next_level).
        Before init(); the child is not initialised by the caller: this Worker's
        init() forks it, and it forks its own children. The child registers
        nothing itself: it knows what the top Worker registered."""
        self._check_process("add_worker")
        check_type("Worker.add_worker.child", child, Worker)
        if self.level == 3:
            raise ValueError("Worker.add_worker: a level-3 Worker's next level is chips (num_chips); Workers are "
                             "children of a level-4 or higher Worker")
        if self._core is not None:
            raise RuntimeError("Worker.add_worker: add children before init() — they are forked at init()")
        if child.level != self.level - 1:
            raise ValueError(f"Worker.add_worker: the children of a level-{self.level} Worker are level-"
                             f"{self.level - 1} Workers (got a level-{child.level} one)")
        if self._remote:
            raise RuntimeError("Worker.add_worker: add the local children before add_remote_workers (remote "
                               "children take the indices after them)")
        if child is self or child._parent is not None or child in self._children:
            raise ValueError(f"Worker.add_worker: {child!r} is already a child of a Worker")
        if child._core is not None:
            raise ValueError("Worker.add_worker: the child was initialised; add it before init() and let this "
                             "Worker start it")
        if child._sub_callables or child._orchestrations or len(child._chip_callables) > _RUNTIME_CHIP_CALLABLES:
            raise ValueError("Worker.add_worker: the child registered callables of its own; register them on the "
                             "top Worker, whose children all know them by the same handles")
        if child._buffers:
            raise ValueError("Worker.add_worker: the child owns buffers already; create them on the top Worker "
                             "(or inside the child's orchestration)")
        child._parent = self
        self._children.append(child)
        return len(self._children) - 1

    def add_remote_workers(self, n: int, num_chips: Optional[int] = None, num_sub_workers: Optional[int] = None,
                           *, heartbeat_timeout: Optional[float] = None, **options: Any) -> List[int]:
        """Adds `n` level-(N-1) Workers that live in other MPI ranks (other
        hosts) as next-level children of this level-N Worker (N >= 4, the top
        of its tree), after the local ones, and returns their indices. The
        program runs under mpirun (python -m simpler launch -n K script.py):
        rank 0 is this Worker; rank j + 1 serves the j-th remote child, with
        these Worker options, from init() on (see simpler.remote). A remote rank
        silent for `heartbeat_timeout` seconds (default 2.5) is lost."""
        self._check_process("add_remote_workers")
        n = check_int("Worker.add_remote_workers.n", n, minimum=1)
        if self.level == 3:
            raise ValueError("Worker.add_remote_workers: a level-3 Worker's next level is chips (num_chips); remote "
                             "Workers are children of a level-4 or higher Worker")
        if self._parent is not None:
            raise ValueError(f"Worker.add_remote_workers: this Worker is {self.path}, a child of another Worker; "
                             "remote Workers are children of the top Worker (rank 0)")
        if self._core is not None:
            raise RuntimeError("Worker.add_remote_workers: add children before init() — they start at init()")
        if self.level != 4:
            raise ValueError(f"Worker.add_remote_workers: remote children are level-3 Workers, the children of a "
                             f"level-4 Worker (this one is level {self.level})")
        remote.require_mpi("Worker.add_remote_workers")  # MPI is loaded at run time: missing, it fails here
        if heartbeat_timeout is not None:
            if isinstance(heartbeat_timeout, bool) or not isinstance(heartbeat_timeout, (int, float)) or \
                    not 0 < heartbeat_timeout <= 3600:
                raise ValueError(f"Worker.add_remote_workers.heartbeat_timeout: seconds, > 0 and at most 3600 "
                                 f"(got {heartbeat_timeout!r})")
            self._heartbeat_timeout = float(heartbeat_timeout)
        options = {"num_chips": num_chips, "num_sub_workers": num_sub_workers, **options}
        options = {k: v for k, v in options.items() if v is not None}
        worker_config(**options)  # refused here, on every rank, naming the option
        first = len(self._children) + len(self._remote)
        self._remote.extend(dict(options) for _ in range(n))
        return list(range(first, first + n))

    @property
    def num_workers(self) -> int:
        """Next-level Worker children, local and remote."""
        return len(self._children) + len(self._remote)

    def _adopt(self, parent: "Worker", index: int) -> None:
        """In child process `index` of `parent`, right after its fork: this
        Worker takes the tree's registrations and its place in the tree."""
        self._pid = os.getpid()
        self._serial = parent._serial
        self._chip_callables = parent._chip_callables
        self._sub_callables = parent._sub_callables
        self._orchestrations = parent._orchestrations
        self._copy_handle = parent._copy_handle
        self._sum_handle = parent._sum_handle
        if parent._global_first_slot and parent._forking_core is not None:
            # This Worker's chips reach the parent's global windows (inherited with this process).
            self._config.inherit_global_windows(parent._forking_core, parent._global_first_slot[index])
        self.path_name = child_name(parent.level, index)
        self.path = f"{parent.path}/{self.path_name}"
        self._tree_trace = parent._tree_trace
        if self._tree_trace is not None:
            # a traced tree traces every level, and records every level's edges when the top does
            self._config.trace = self._config.trace or parent._config.trace
            self._config.record_edges = self._config.record_edges or parent._config.record_edges

    def init(self) -> "Worker":
        self._check_process("init")
        if self._core is not None:
            raise RuntimeError("Worker.init: " + ("the Worker is closed; create a new one" if self._core.closed
                                                   else "already initialized"))
        if self._remote and self._parent is None:
            rank = remote.mpi_rank()
            if rank:  # a remote child's rank: serves it and exits
                remote.serve_rank(self, rank, self._heartbeat_timeout)
        try:
            remote.resolve_all(self._orchestrations)
            remote.resolve_all(self._sub_callables)
        except RuntimeError as e:
            raise RuntimeError(f"Worker.init: {e}") from None
        libraries = check_orchestrations(self._chip_callables)
        dispatch = make_dispatcher(self._sub_callables) if self.num_sub_workers else None
        install = late_register.make_installer(self._sub_callables) if self.num_sub_workers else None
        config = self._config
        config.chip_lane.chip.orchestrations = [c.orchestration for c in self._chip_callables]
        config.chip_lane.chip.libraries = libraries
        config.sub_callable_names = [self.callable_name(TaskKind.SUB, i) for i in range(len(self._sub_callables))]
        config.num_workers = self.num_workers
        config.path = self.path
        children = self._children
        if self.level == 4 and any(c.num_chips for c in children):
            # One window heap per (local L3 child, chip), mapped before the forks (allocate_global_domain).
            config.global_window_chips = [c.num_chips for c in children]
            config.global_window_child_names = [child_name(self.level, i) for i in range(len(children))]
            self._global_first_slot = [sum(c.num_chips for c in children[:i]) for i in range(len(children))]
            if self._phase_handle is None:
                self._orchestrations.append(collective_phase)
                self._phase_handle = CallableHandle(len(self._orchestrations) - 1, ChildKind.WORKER,
                                                    "std.collective_phase", self._serial)
        config.worker_callable_names = [_callable_name(f) for f in self._orchestrations]
        if children and (self._config.trace or self._config.record_edges) and self._tree_trace is None:
            self._tree_trace = TreeTrace()
        worker_start = (lambda index: start_child(self, index)) if children else None
        relays = (remote.remote_children(self, len(children), self._remote, self._heartbeat_timeout)
                  if self._remote else None)
        core = EngineWorker(config, None, dispatch, worker_start, relays, install)
        self._forking_core = core
        try:
            core.init()
        finally:
            self._forking_core = None
        self._core = core
        self._watch.started(core, self.path, self._children_text())
        me = weakref.ref(self)
        self._watch.follow(lambda: getattr(me(), "_core", None), core.status_channel, self.path)
        if self._remote:
            remote.dismiss_extra_ranks(1 + len(self._remote))
        return self

    def create_buffer(self, nbytes: int, access: AccessMode = AccessMode.READWRITE) -> Buffer:
        """A POSIX shm buffer owned by this Worker (closed with it)."""
        return self._keep(create_buffer(nbytes, access, owner_worker_path_id=intern_owner_path(self.path)))

    def _keep(self, buffer: _B) -> _B:
        """Makes `buffer` this Worker's: closed with it, and released by its release_buffer only."""
        buffer._worker = weakref.ref(self)
        self._buffers.append(buffer)
        return buffer

    def alloc_shared_tensor(self, shape: Sequence[int], dtype: DataType,
                            access: AccessMode = AccessMode.READWRITE) -> SharedTensor:
        """Host memory for one (shape, dtype), shared with every child and closed
        with this Worker. Before init() it is a FORK_SHM region (the children
        inherit it at the same address: nothing to map); after init() a POSIX shm
        (each consumer maps it once)."""
        shape = check_shape("alloc_shared_tensor.shape", shape)
        check_type("alloc_shared_tensor.dtype", dtype, DataType)
        check_type("alloc_shared_tensor.access", access, AccessMode)
        nbytes = math.prod(shape) * element_size(dtype)
        path_id = intern_owner_path(self.path)
        owner = (create_fork_shm(nbytes, access, path_id) if self._core is None
                 else create_posix_shm(nbytes, access, path_id))
        return self._keep(SharedTensor(owner, shape, dtype))

    def share(self, obj: Any, access: Optional[AccessMode] = None, copy: bool = False) -> SharedTensor:
        """Names the bytes of a NumPy array or a torch tensor (contiguous, host
        memory) as a buffer of this Worker, without copying them: a task's
        writes land in `obj` itself. Returns an AdoptedTensor (a SharedTensor of
        obj's shape and dtype; `.source` is obj), kept with the Worker and
        closed with it. Before init(): MAP_SHARED memory (torch
        `share_memory_()`, multiprocessing.shared_memory, `mmap.mmap(-1, n)`)
        becomes FORK_SHM (access READWRITE unless given), private memory
        FORK_COW (READ only: children see it as of init(), so once the host
        writes it after init() a task naming it is refused); a NumPy array whose
        WRITEABLE flag is off is granted READ only. After init(): memory
        in a named POSIX shm object becomes POSIX_SHM naming it; anything else
        is refused with the remedy. The buffer keeps obj alive while any task
        names it and never frees its bytes. copy=True copies into a new
        alloc_shared_tensor instead (writes then land in the copy).
        TypeError for another type; ValueError (nothing changed) for memory it
        cannot name, naming why and what to do (docs/backings.md, "Shared
        memory you bring")."""
        return share_memory(self, obj, access, copy)

    def release_buffer(self, buffer: Buffer, wait: bool = False) -> None:
        """Releases a host buffer: never frees bytes a queued or running task
        still names. When no unfinished task of any Worker of this process names
        it, the bytes are freed now; else when the last such task finishes. From
        the call on, a submit naming the buffer is refused, and once freed, every
        child of every live Worker drops it from its import cache. Returns at once,
        or with wait=True once the bytes are freed (asleep, the GIL released).
        BufferError (nothing changes) while a view of the owner's own mapping is
        exported; ValueError (nothing changes) for a buffer of another Worker.
        Buffer.close() is the same release without the wait."""
        check_type("release_buffer.buffer", buffer, Buffer)
        wait = check_bool("release_buffer.wait", wait)
        owner = buffer._worker() if buffer._worker is not None else None
        if owner is not None and owner is not self:
            raise ValueError(f"Worker.release_buffer: buffer {buffer.identity} belongs to another Worker "
                             f"({owner.path}), whose tasks may name it; release it with that Worker's release_buffer")
        buffer.close()
        if wait:
            buffer.wait_freed()
        if buffer in self._buffers:
            self._buffers.remove(buffer)

    # -- running --------------------------------------------------------------
    def submit(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any = None,
               cfg: Any = None) -> RunFuture:
        """run() without waiting: returns at once a RunFuture (a
        concurrent.futures.Future; asyncio.wrap_future accepts it) whose result()
        is what run() returns or raises. orch_fn runs on this Worker's
        orchestration thread; runs are built one after another in the order
        submit() and run() were called, so a run's tasks are ordered against
        the tasks of every run asked for before it. Any number of runs may be in
        flight; each future completes when its own run's tasks have finished and
        carries that run's failures only. cancel() succeeds only before orch_fn
        has started. close() fails the runs not yet started and ends the waits
        of those in flight with a RuntimeError naming their unfinished tasks.
        On the top Worker only (a nested Worker's runs are its parent's tasks)."""
        self._running_top("submit")
        if not callable(orch_fn):
            raise TypeError(f"Worker.submit.orch_fn: expected a callable fn(orch, args, cfg) (got {got(orch_fn)})")
        self._runs.check_not_nested("submit")
        return self._runs.submit(orch_fn, args, cfg)

    def run(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any = None,
            cfg: Any = None) -> Orchestrator:
        """Calls orch_fn(orch, args, cfg) to build the graph, then waits for the
        run's tasks. If orch_fn raises, the tasks it already submitted still
        finish first. Device memory the run allocated in no inner scope is
        released at its end. With runs submitted before it (submit()), orch_fn
        runs, on the caller's thread, once they are built; run() from several
        threads builds the runs one at a time and waits for each alone.

        Ctrl-C (KeyboardInterrupt) while orch_fn runs or run() waits ends the run
        within about _WAIT_SLICE_S: tasks not yet dispatched never run, nor does
        a task queued on a chip's lane that the chip has not begun; tasks a child
        has begun finish there (or hit task_timeout) and the next run() waits
        for them too; the KeyboardInterrupt carries a note saying which. The
        Worker stays usable. close() from another thread ends the wait with a
        RuntimeError naming the tasks that had not finished."""
        return self._run(orch_fn, args, cfg, None)

    def _run_forwarded(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any, cfg: Any,
                       scope: ForwardedScope) -> None:
        """One run of a nested Worker for its parent's task: run(), with every
        submit held to the views the parent's task forwarded. In a traced tree
        the run's events go to the tree's record for the top's write_trace()."""
        try:
            self._run(orch_fn, args, cfg, scope)
        finally:
            record, core = self._tree_trace, self._core
            if record is not None and core is not None and self._config.trace:
                events = core.trace_events()
                core.trace_clear()
                record.append(self.path, os.getpid(), self._trace_names(),
                              {ChildKind.CHIP: self.num_chips, ChildKind.SUB_WORKER: self.num_sub_workers,
                               ChildKind.WORKER: self.num_workers}, events)
            if record is not None and core is not None and self._config.record_edges:
                record.append_edges(self.path, core.take_edge_log())

    def _run(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any, cfg: Any,
             scope: Optional[ForwardedScope]) -> Orchestrator:
        core = self._running()
        runs = self._runs
        runs.check_not_nested("run")
        error: Optional[BaseException] = None
        runs.begin_turn()
        try:
            orch = Orchestrator(self, scope, core)
            try:
                try:
                    orch_fn(orch, args, cfg)
                except BaseException as e:  # noqa: BLE001 - raised below, once the run has ended
                    error = e
                finally:
                    orch._end_run()
            finally:
                run = core.end_run(False)
        finally:
            runs.end_turn()
        failed = ""
        try:
            if isinstance(error, KeyboardInterrupt):
                raise error  # Ctrl-C while orch_fn built the graph: cancelled without waiting
            try:
                if not core.wait_run(run, _WAIT_SLICE_S):  # the first slice inline: most runs end in it
                    _wait(core, run)
            except RuntimeError as e:
                failed = str(e)  # kept as text: no local holds the exception in a cycle
            failed = self._run_outcome(failed)
        except KeyboardInterrupt as interrupt:
            # wherever it struck: in orch_fn or in the wait
            _cancel(core, run, interrupt)
            raise
        if error is not None:
            raise error  # the orchestration error is the one to report
        if failed:
            raise RuntimeError(failed)
        return orch

    def _run_outcome(self, failure: str) -> str:
        """After a run's wait (run() and the submit completion thread): logs the
        children lost meanwhile, and for a failed run returns what its
        RuntimeError says — at the top of a tree of Workers led by its path from
        here ('L4 → L3[0] → chip 1: ...'; a nested Worker's server adds its own)
        — logged (INFO). Empty for a run that succeeded."""
        if self._core is not None:
            self._watch.check(self._core, self.path)
        if not failure:
            return ""
        if self.num_workers and self._parent is None:
            failure = with_path(self.path_name, self.level, failure)
        logger.info("%s: run failed: %s", self.path, failure)
        return failure

    def _running_top(self, what: str) -> EngineWorker:
        if self._parent is not None:
            raise RuntimeError(f"Worker.{what}: this Worker is {self.path}, a child of another Worker; its runs are "
                               "its parent's tasks (submit on the top Worker)")
        return self._running()

    def _check_process(self, what: str) -> None:
        # current_process_id(): os.getpid() without its system call, twice per run
        if current_process_id() != self._pid:
            raise RuntimeError(f"Worker.{what}: this process (pid {os.getpid()}) was forked from the Worker's "
                               f"owner (pid {self._pid}); a Worker runs only in the process that created it")

    def _running(self) -> EngineWorker:
        self._check_process("run")
        if self._core is None:
            raise RuntimeError("Worker: call init() first")
        if self._core.closed:
            raise RuntimeError("Worker: closed; create a new Worker")
        return self._core

    def callable_name(self, kind: TaskKind, callable_id: int) -> str:
        if kind == TaskKind.NEXT_LEVEL:
            if self.level > 3:
                return _callable_name(self._orchestrations[callable_id])
            return self._chip_callables[callable_id].orchestration
        return _callable_name(self._sub_callables[callable_id])

    def _check_callable(self, handle: object, kind: TaskKind) -> CallableHandle:
        if not isinstance(handle, CallableHandle):
            raise TypeError(f"expected a handle from Worker.register, got {handle!r}")
        if handle.worker_serial != self._serial:
            raise ValueError(f"callable {handle.name!r} was registered on another Worker; a handle names a "
                             "callable of the Worker that registered it (register it on this one too)")
        expected = self._runs_on(kind)
        if handle.runs_on != expected:
            runs = {ChildKind.CHIP: "chips", ChildKind.WORKER: f"level-{self.level - 1} Workers",
                    ChildKind.SUB_WORKER: "sub-workers"}[expected]
            raise ValueError(f"callable {handle.name!r} is a {handle.describe()}; this {kind.name} submit of "
                             f"{self.path} runs on its {runs}")
        self._running()
        return handle

    def _runs_on(self, kind: TaskKind) -> ChildKind:
        """The kind of child a `kind` task of this Worker runs on."""
        if kind == TaskKind.SUB:
            return ChildKind.SUB_WORKER
        return ChildKind.WORKER if self.level > 3 else ChildKind.CHIP

    def take_edge_log(self) -> list:
        """Every edge inferred since the last call (an EdgeExplanation each: which
        arguments, which rule, which overlap answer), then clears them. Needs
        Worker(record_edges=True)."""
        return self._running().take_edge_log()

    def take_edge_logs_below(self) -> Dict[str, List[str]]:
        """The edges every Worker nested below this one inferred since the last
        call, by path ('L4/L3[0]': one line per EdgeExplanation), then clears
        them. Needs record_edges=True on this (the top) Worker."""
        self._running()
        if self._tree_trace is None or not self._config.record_edges:
            raise RuntimeError("Worker.take_edge_logs_below: needs a Worker with nested Workers created with "
                               "record_edges=True")
        return self._tree_trace.take_edges()

    def device_stats(self, chip: int) -> Dict[str, int]:
        """Chip `chip`'s device memory (alloc_child_tensor): capacity_bytes,
        bytes_in_use, live_allocations and largest_free_block; and its window
        heap (allocate_domain): window_capacity_bytes, window_bytes_in_use and
        live_windows, now. A block or domain released while tasks still name it
        counts until they have finished."""
        chip = check_int("device_stats.chip", chip, bits=32)
        if self.level > 3:
            raise ValueError(f"Worker.device_stats: {self.path} is level {self.level}; device memory belongs to the "
                             "chips of a level-3 Worker")
        return dict(self._running().device_stats(chip))

    def global_window_stats(self) -> Dict[str, int]:
        """A level-4 Worker's global windows (allocate_global_domain), now:
        window_capacity_bytes (over every member slot), window_bytes_in_use,
        live_windows (one per member of each domain) and live_domains. A domain
        released while tasks still name it counts until they have finished."""
        if self.level != 4:
            raise ValueError(f"Worker.global_window_stats: {self.path} is level {self.level}; global windows belong "
                             "to a level-4 Worker (allocate_global_domain)")
        return dict(self._running().global_window_stats())

    def progress(self) -> Progress:
        """What this Worker has submitted and finished since init(), and per child
        what it finished and whether a task runs on it now (a consistent
        snapshot; also after close()). simpler.show_progress(w) displays it."""
        self._check_process("progress")
        if self._core is None:
            raise RuntimeError("Worker.progress: call init() first")
        return snapshot(self._core.progress())

    def _children_text(self) -> str:
        """'2 chips, 1 sub-worker' (what init() started)."""
        counts = [(self.num_chips, "chip"), (self.num_sub_workers, "sub-worker"),
                  (len(self._children), f"level-{self.level - 1} Worker"), (len(self._remote), "remote Worker")]
        return ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts if n) or "no children"

    def child_status(self) -> List[str]:
        return self._core.child_status() if self._core else []

    def child_pids(self) -> List[int]:
        return self._core.child_pids() if self._core else []

    # -- tracing --------------------------------------------------------------
    def _traced(self, what: str) -> Optional[EngineWorker]:
        if not self._config.trace:
            raise RuntimeError(f"Worker.{what}: this Worker records no trace — create it with "
                               f"Worker(..., trace=True)")
        return self._core

    def trace_events(self) -> List[TraceEvent]:
        """Every SUBMIT and finished RUN event so far (see simpler.trace); also after close()."""
        core = self._traced("trace_events")
        return core.trace_events() if core else []

    def trace_clear(self) -> None:
        """Forgets the events recorded so far (the next trace starts empty)."""
        core = self._traced("trace_clear")
        if core:
            core.trace_clear()
        if self._tree_trace is not None:
            self._tree_trace.clear()

    def write_trace(self, path: str | os.PathLike[str]) -> None:
        """Writes the timeline so far to `path` as Chrome Trace Event Format JSON
        (open it in https://ui.perfetto.dev); RuntimeError unless trace=True.
        With Workers nested below, each is a process of its own under this one
        ('simpler Worker L4/L3[0]', its chips and sub-workers as lanes)."""
        core = self._traced("write_trace")
        events = core.trace_events() if core else []
        below = self._tree_trace.timelines() if self._tree_trace is not None else self._tree_below
        trace = chrome_trace(events, self._trace_names(), num_chips=self.num_chips,
                             num_sub_workers=self.num_sub_workers, dropped=core.trace_dropped() if core else 0,
                             process_name=f"simpler Worker {self.path} (level {self.level})", below=below)
        write_chrome_trace(path, trace)

    def _trace_names(self) -> dict:
        """What a trace calls each callable, by (kind, id)."""
        next_level = len(self._orchestrations) if self.level > 3 else len(self._chip_callables)
        names = {(TaskKind.NEXT_LEVEL, i): self.callable_name(TaskKind.NEXT_LEVEL, i) for i in range(next_level)}
        names.update({(TaskKind.SUB, i): self.callable_name(TaskKind.SUB, i) for i in range(len(self._sub_callables))})
        return names

    # -- teardown -------------------------------------------------------------
    def close(self) -> None:
        """Stops every child (no child outlives close()) and closes the buffers this
        Worker created. Idempotent."""
        if os.getpid() != self._pid:
            return  # a forked child never tears down its parent's Worker
        if self._core is not None:
            was_open = not self._core.closed
            if was_open:
                self._watch.check(self._core, self.path)
            self._core.close()
            self._watch.stop()
            self._runs.close()
            if was_open and self._remote and self._parent is None:
                remote.report_lost(self)
        if self._tree_trace is not None and self._parent is None:
            self._tree_below = self._tree_trace.timelines()  # write_trace() still shows them after close()
            self._tree_trace.remove()
            self._tree_trace = None
        errors = []
        for b in self._buffers:
            try:
                b.close()
            except BufferError as e:
                errors.append(e)
        self._buffers = [b for b in self._buffers if not b.closed]
        if errors:
            raise errors[0]

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._core and self._core.closed else ("running" if self._core else "not initialized")
        workers = f"num_workers={self.num_workers}" if self.level > 3 else f"num_chips={self.num_chips}"
        where = f"{self.path}, " if self._parent is not None else ""
        return f"Worker({where}level={self.level}, {workers}, num_sub_workers={self.num_sub_workers}, {state})"

