"""Worker: one level of the hierarchy (L3 host and above) as running processes.

    w = Worker(level=3, num_chips=2, num_sub_workers=2)
    vadd = w.register(ChipCallable("std.vector_add"))  # a chip orchestration (C++)
    post = w.register(python_fn)      # a sub-worker callable: fn(args: MappedArgs)
    w.init()                          # forks every child before any thread exists
    w.run(my_orch)                    # my_orch(orch, args, cfg) only builds the graph
    w.close()                         # also a context manager

The Worker is the face of its machinery (simpler.runtime, whose parts share a
RuntimeState, never the Worker): options (simpler.runtime.config),
registration (simpler.runtime.register), runs and futures
(simpler.runtime.runs), and the tree below a level-4 Worker (simpler.tree:
nested Workers, remote ranks). docs/ is the guide to all of it: the tutorial, the how-to
pages, docs/explanation/runs.md and the API reference.
"""

from __future__ import annotations

import math
import os
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, TypeVar, Union

from simpler._core import (
    ChildStatus,
    DataType,
    DeviceFacts,
    EngineWorker,
    TaskKind,
    TraceEvent,
    WorkerConfig,
    create_fork_shm,
    create_posix_shm,
    element_size,
    intern_owner_path,
)
from simpler.collectives import collective_phase
from simpler.model.arg_checks import check_bool, check_int, check_shape, check_type, got
from simpler.model.buffer import AccessMode, Buffer, SharedTensor, create_buffer, set_worker, worker_of
from simpler.model.callable_handle import CallableHandle
from simpler.model.chip_callable import ChipCallable, check_orchestrations
from simpler.model.edge_log import EdgeLog
from simpler.model.share import share as share_memory
from simpler.runtime import register
from simpler.runtime.callables import callable_name, make_installer, resolve_all
from simpler.runtime.config import check_level, default_device, worker_config
from simpler.runtime.errors import child_name
from simpler.runtime.orchestrator import Orchestrator
from simpler.runtime.progress import Progress, snapshot
from simpler.runtime.runs import RunFuture, RunQueue
from simpler.runtime.state import RuntimeState
from simpler.runtime.sub_worker import make_dispatcher
from simpler.runtime.trace import ProcessTimeline, TreeTrace, chrome_trace, write_chrome_trace
from simpler.tree import children, remote
from simpler.tree.nested import ChildWorker, start_child

_B = TypeVar("_B", bound=Buffer)


class Worker:
    """One level of the hierarchy as running processes: level 3 is a host with chips and Python
    sub-workers; level 4 and up, a pod of next-level Workers. Register callables, init() (which
    forks the children), then run(orch_fn) or submit(orch_fn); close() (or the `with` block) stops
    every child and closes the buffers the Worker created."""

    def __init__(
        self,
        level: int = 3,
        num_chips: Optional[int] = None,
        num_sub_workers: Optional[int] = None,
        *,
        task_timeout: Optional[float] = None,
        blob_capacity: Optional[int] = None,
        chip_core_threads: Optional[int] = None,
        chip_arena_bytes: Optional[int] = None,
        device_memory_bytes: Optional[int] = None,
        window_heap_bytes: Optional[int] = None,
        zero_copy: Optional[bool] = None,
        device: Optional[str] = None,
        device_platform: Optional[str] = None,
        record_edges: Optional[bool] = None,
        trace: Optional[bool] = None,
        trace_capacity: Optional[int] = None,
        edge_log_capacity: Optional[int] = None,
        max_unfinished: Optional[int] = None,
        chip_conditions: Optional[bool] = None,
        spin: Optional[float] = None,
    ):
        """A Worker of `level` (3: a host, with chips and sub-workers; 4 and up:
        a pod, with Workers one level down). Each keyword sets the WorkerConfig
        field of its name (or the one simpler.runtime.config renames it to); None
        keeps the default. Nothing starts before init()."""
        level = check_level(level, num_chips)
        config = worker_config(
            level=level,
            num_chips=num_chips,
            num_sub_workers=num_sub_workers,
            task_timeout=task_timeout,
            blob_capacity=blob_capacity,
            chip_core_threads=chip_core_threads,
            chip_arena_bytes=chip_arena_bytes,
            device_memory_bytes=device_memory_bytes,
            window_heap_bytes=window_heap_bytes,
            zero_copy=zero_copy,
            device=default_device(device),
            device_platform=device_platform,
            record_edges=record_edges,
            trace=trace,
            trace_capacity=trace_capacity,
            edge_log_capacity=edge_log_capacity,
            max_unfinished=max_unfinished,
            chip_conditions=chip_conditions,
            spin=spin,
        )
        self._state = RuntimeState(level, config)
        self._children: List[Worker] = []  # next-level Workers (add_worker); their states are the state's children
        self._heartbeat_timeout = remote.DEFAULT_HEARTBEAT_TIMEOUT_S
        self._tree_below: List[ProcessTimeline] = []  # the timelines of the Workers below, kept at close()
        self._buffers: List[Buffer] = []
        self._runs = RunQueue(self._state, self)  # runs asked for and not yet built; submitted runs in flight

    # -- what it is ---------------------------------------------------------------
    @property
    def level(self) -> int:
        """3 for a host, 4 and up for a pod of level-(N-1) Workers."""
        return self._state.level

    @property
    def num_chips(self) -> int:
        """How many chip children it has (a level-3 Worker)."""
        return self._state.num_chips

    @property
    def num_sub_workers(self) -> int:
        """How many Python sub-worker children it has."""
        return self._state.num_sub_workers

    @property
    def num_workers(self) -> int:
        """Next-level Worker children, local and remote."""
        return self._state.num_workers

    @property
    def path_name(self) -> str:
        """How failure paths name this Worker: 'L4' at the top, 'L3[0]' as child 0 of an L4."""
        return self._state.path_name

    @property
    def path(self) -> str:
        """Where this Worker is from the top: 'L4/L3[0]'."""
        return self._state.path

    # -- set-up ---------------------------------------------------------------
    @property
    def config(self) -> WorkerConfig:
        """The WorkerConfig this Worker runs with (at init(), the registered
        callables' names are added to it, and by each register() after it)."""
        return self._state.config

    def register(
        self, fn: Union[ChipCallable, Callable[..., None], str], kind: Optional[TaskKind] = None
    ) -> CallableHandle:
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
        (simpler.runtime.register). It may run while a run is in flight, from
        another thread or from the orchestration function."""
        return register.register(self._state, fn, kind)

    def add_worker(self, child: "Worker") -> int:
        """Adds level-(N-1) Worker `child` as a next-level child of this level-N
        Worker (N >= 4) and returns its index (the `worker=` of submit_next_level).
        Before init(); the child is not initialised by the caller: this Worker's
        init() forks it, and it forks its own children. The child registers
        nothing itself: it knows what the top Worker registered."""
        state = self._state
        state.check_process("add_worker")
        check_type("Worker.add_worker.child", child, Worker)
        taken = child is self or child._state.parent is not None or child in self._children
        children.check_local_child(
            state, child._state, taken=repr(child) if taken else None, owns_buffers=bool(child._buffers)
        )
        child._state.parent = state
        state.children.append(child._state)
        self._children.append(child)
        return len(self._children) - 1

    def add_remote_workers(
        self,
        n: int,
        num_chips: Optional[int] = None,
        num_sub_workers: Optional[int] = None,
        *,
        heartbeat_timeout: Optional[float] = None,
        **options: Any,
    ) -> List[int]:
        """Adds `n` level-(N-1) Workers that live in other MPI ranks (other
        hosts) as next-level children of this level-N Worker (N >= 4, the top
        of its tree), after the local ones, and returns their indices. The
        program runs under mpirun (python -m simpler launch -n K script.py):
        rank 0 is this Worker; rank j + 1 serves the j-th remote child, with
        these Worker options, from init() on (see simpler.tree.remote). A remote rank
        silent for `heartbeat_timeout` seconds (default 2.5) is lost."""
        state = self._state
        state.check_process("add_remote_workers")
        n = check_int("Worker.add_remote_workers.n", n, minimum=1)
        heartbeat_timeout = children.check_remote_children(state, heartbeat_timeout)
        if heartbeat_timeout is not None:
            self._heartbeat_timeout = heartbeat_timeout
        options = {"num_chips": num_chips, "num_sub_workers": num_sub_workers, **options}
        options = {k: v for k, v in options.items() if v is not None}
        worker_config(**options)  # refused here, on every rank, naming the option
        first = state.num_workers
        state.remote.extend(dict(options) for _ in range(n))
        return list(range(first, first + n))

    def _adopted(self, parent: RuntimeState, index: int) -> ChildWorker:
        """In child process `index` of `parent`, right after its fork: this
        Worker takes the tree's registrations and its place in the tree, and is
        handed to the child side of its lane (simpler.tree)."""
        children.adopt(self._state, parent, index)
        return ChildWorker(self._state, self.init, self.close, self._runs.run_forwarded)

    def _remote_child(self, hello: Dict[str, Any]) -> ChildWorker:
        """On a remote rank: the level-3 Worker rank 0's HELLO describes, as child `index` of this (top) Worker."""
        child = Worker(level=int(hello["level"]), **hello["options"])
        adopted = child._adopted(self._state, int(hello["index"]))
        child._state.path = f"{hello['path']}/{child.path_name}"
        child._state.tree_trace = None  # a trace stays on its host
        return adopted

    def init(self) -> "Worker":
        """Forks every child (chips, sub-workers, next-level Workers) and starts
        them; the registered callables are known to every child from here."""
        state = self._state
        state.check_process("init")
        if state.core is not None:
            raise RuntimeError(
                "Worker.init: "
                + ("the Worker is closed; create a new one" if state.core.closed else "already initialized")
            )
        table = state.callables
        if state.remote and state.parent is None:
            rank = remote.mpi_rank()
            if rank:  # a remote child's rank: serves it and exits
                remote.serve_rank(state, rank, self._heartbeat_timeout, self._remote_child)
        try:
            resolve_all(table.orchestrations)
            resolve_all(table.sub)
        except RuntimeError as e:
            raise RuntimeError(f"Worker.init: {e}") from None
        libraries = check_orchestrations(table.chip)
        dispatch = make_dispatcher(table.sub) if self.num_sub_workers else None
        install = make_installer(table.sub) if self.num_sub_workers else None
        config = state.config
        config.chip_lane.chip.orchestrations = [c.orchestration for c in table.chip]
        config.chip_lane.chip.libraries = libraries
        config.sub_callable_names = [state.callable_name(TaskKind.SUB, i) for i in range(len(table.sub))]
        config.num_workers = self.num_workers
        config.path = self.path
        children = state.children
        if self.level == 4 and any(c.num_chips for c in children):
            # One window heap per (local L3 child, chip), mapped before the forks (allocate_global_domain).
            config.global_window_chips = [c.num_chips for c in children]
            config.global_window_child_names = [child_name(self.level, i) for i in range(len(children))]
            config.global_window_devices = [c.config.chip_lane.chip.device.kind for c in children]
            state.global_first_slot = [sum(c.num_chips for c in children[:i]) for i in range(len(children))]
            table.add_phase(collective_phase, "std.collective_phase")
        config.worker_callable_names = [callable_name(f) for f in table.orchestrations]
        if children and (config.trace or config.record_edges) and state.tree_trace is None:
            state.tree_trace = TreeTrace()
        worker_start = (lambda index: start_child(self._children[index]._adopted(state, index))) if children else None
        relays = (
            remote.remote_children(
                state, len(children), state.remote, self._heartbeat_timeout, weakref.WeakMethod(self.close)
            )
            if state.remote
            else None
        )
        core = EngineWorker(config, None, dispatch, worker_start, relays, install)
        state.forking_core = core
        try:
            core.init()
        finally:
            state.forking_core = None
        state.core = core
        state.watch.started(core, self.path, state.children_text())
        me = weakref.ref(state)
        state.watch.follow(lambda: getattr(me(), "core", None), core.status_channel, self.path)
        if state.remote:
            remote.dismiss_extra_ranks(1 + len(state.remote))
        return self

    def create_buffer(self, nbytes: int, access: AccessMode = AccessMode.READWRITE) -> Buffer:
        """A POSIX shm buffer owned by this Worker (closed with it)."""
        return self._keep(create_buffer(nbytes, access, owner_worker_path_id=intern_owner_path(self.path)))

    def _keep(self, buffer: _B) -> _B:
        """Makes `buffer` this Worker's: closed with it, and released by its release_buffer only."""
        set_worker(buffer, self)
        self._buffers.append(buffer)
        return buffer

    def alloc_shared_tensor(
        self, shape: Sequence[int], dtype: DataType, access: AccessMode = AccessMode.READWRITE
    ) -> SharedTensor:
        """Host memory for one (shape, dtype), shared with every child and closed
        with this Worker. Before init() it is a FORK_SHM region (the children
        inherit it at the same address: nothing to map); after init() a POSIX shm
        (each consumer maps it once)."""
        shape = check_shape("alloc_shared_tensor.shape", shape)
        check_type("alloc_shared_tensor.dtype", dtype, DataType)
        check_type("alloc_shared_tensor.access", access, AccessMode)
        nbytes = math.prod(shape) * element_size(dtype)
        path_id = intern_owner_path(self.path)
        owner = (
            create_fork_shm(nbytes, access, path_id)
            if self._state.core is None
            else create_posix_shm(nbytes, access, path_id)
        )
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
        cannot name, naming why and what to do (docs/internals/backings.md, "Shared
        memory you bring")."""
        self._state.check_process("share")
        core = self._state.core
        if core is not None and core.closed:
            raise RuntimeError("Worker.share: the Worker is closed; create a new Worker")
        return self._keep(
            share_memory(
                obj, access, copy, owner_path=self.path, initialized=core is not None, alloc=self.alloc_shared_tensor
            )
        )

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
        owner = worker_of(buffer)
        if owner is not None and owner is not self:
            raise ValueError(
                f"Worker.release_buffer: buffer {buffer.identity} belongs to another Worker "
                f"({owner.path}), whose tasks may name it; release it with that Worker's release_buffer"
            )
        buffer.close()
        if wait:
            buffer.wait_freed()
        if buffer in self._buffers:
            self._buffers.remove(buffer)

    # -- running --------------------------------------------------------------
    def submit(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any = None, cfg: Any = None) -> RunFuture:
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
        self._state.running_top("submit")
        if not callable(orch_fn):
            raise TypeError(f"Worker.submit.orch_fn: expected a callable fn(orch, args, cfg) (got {got(orch_fn)})")
        self._runs.check_not_nested("submit")
        return self._runs.submit(orch_fn, args, cfg)

    def run(self, orch_fn: Callable[[Orchestrator, Any, Any], None], args: Any = None, cfg: Any = None) -> Orchestrator:
        """Calls orch_fn(orch, args, cfg) to build the graph, then waits for the
        run's tasks. If orch_fn raises, the tasks it already submitted still
        finish first. Device memory the run allocated in no inner scope is
        released at its end. With runs submitted before it (submit()), orch_fn
        runs, on the caller's thread, once they are built; run() from several
        threads builds the runs one at a time and waits for each alone.

        Ctrl-C (KeyboardInterrupt) while orch_fn runs or run() waits ends the run
        within about 50 ms (WAIT_SLICE_S): tasks not yet dispatched never run, nor does
        a task queued on a chip's lane that the chip has not begun; tasks a child
        has begun finish there (or hit task_timeout) and the next run() waits
        for them too; the KeyboardInterrupt carries a note saying which. The
        Worker stays usable. close() from another thread ends the wait with a
        RuntimeError naming the tasks that had not finished."""
        return self._runs.run(orch_fn, args, cfg, None)

    def callable_name(self, kind: TaskKind, callable_id: int) -> str:
        """What errors and traces call callable `callable_id` of `kind`."""
        return self._state.callable_name(kind, callable_id)

    def take_edge_log(self) -> EdgeLog:
        """Every edge inferred since the last call (an EdgeExplanation each: which
        arguments, which rule, which overlap answer), then clears them: a list, at
        most edge_log_capacity long, whose `dropped` counts the edges not kept. Needs
        Worker(record_edges=True)."""
        log = self._state.running().take_edge_log()
        return EdgeLog(log.edges, log.dropped)

    def take_edge_logs_below(self) -> Dict[str, List[str]]:
        """The edges every Worker nested below this one inferred since the last
        call, by path ('L4/L3[0]': one line per EdgeExplanation), then clears
        them. Needs record_edges=True on this (the top) Worker."""
        self._state.running()
        if self._state.tree_trace is None or not self._state.config.record_edges:
            raise RuntimeError(
                "Worker.take_edge_logs_below: needs a Worker with nested Workers created with record_edges=True"
            )
        return self._state.tree_trace.take_edges()

    def device_stats(self, chip: int) -> Dict[str, int]:
        """Chip `chip`'s device memory (alloc_child_tensor): capacity_bytes,
        bytes_in_use, live_allocations and largest_free_block; and its window
        heap (allocate_domain): window_capacity_bytes, window_bytes_in_use and
        live_windows, now. A block or domain released while tasks still name it
        counts until they have finished."""
        chip = check_int("device_stats.chip", chip, bits=32)
        if self.level > 3:
            raise ValueError(
                f"Worker.device_stats: {self.path} is level {self.level}; device memory belongs to the "
                "chips of a level-3 Worker"
            )
        return dict(self._state.running().device_stats(chip))

    def global_window_stats(self) -> Dict[str, int]:
        """A level-4 Worker's global windows (allocate_global_domain), now:
        window_capacity_bytes (over every member slot), window_bytes_in_use,
        live_windows (one per member of each domain) and live_domains. A domain
        released while tasks still name it counts until they have finished."""
        if self.level != 4:
            raise ValueError(
                f"Worker.global_window_stats: {self.path} is level {self.level}; global windows belong "
                "to a level-4 Worker (allocate_global_domain)"
            )
        return dict(self._state.running().global_window_stats())

    def progress(self) -> Progress:
        """What this Worker has submitted and finished since init(), and per child
        what it finished and whether a task runs on it now (a consistent
        snapshot; also after close()). simpler.show_progress(w) displays it."""
        self._state.check_process("progress")
        if self._state.core is None:
            raise RuntimeError("Worker.progress: call init() first")
        return snapshot(self._state.core.progress())

    def child_status(self) -> List[ChildStatus]:
        """One ChildStatus per child, in child order: `.child`, `.lost` and `.why`; for a next-level
        Worker, `.below_lost` and `.below` (what it lost below it). `str()` of one is the line people
        read: `chip 0: usable`, `chip 1: lost (child killed by signal 9 ...)`. Empty before init()."""
        return list(self._state.core.child_states()) if self._state.core else []

    def child_pids(self) -> List[int]:
        """The process ids of its local children (chips, sub-workers, next-level Workers); a remote
        child, on another MPI rank, has none here. Empty before init()."""
        return self._state.core.child_pids() if self._state.core else []

    def device_facts(self, chip: int) -> DeviceFacts:
        """The device chip `chip` drives, as the chip itself opened it (after
        init()): its `kind` (DeviceKind.SIMULATED or OPENCL), `platform`, `name`,
        the driver's `version`, `memory_bytes` (its device heap),
        `compute_units`, `concurrent_kernels` and `unified_host_memory` (kernels
        read and write host memory in place). Waits while the chip is still
        starting. IndexError for no such chip; ValueError on a Worker above
        level 3 (its chips belong to its level-3 children); RuntimeError before
        init() or after close(), or when the chip could not start or was lost
        first."""
        chip = check_int("Worker.device_facts.chip", chip, bits=32)
        if self.level > 3:
            raise ValueError(
                f"Worker.device_facts: {self.path} is level {self.level}; devices belong to the chips of a "
                "level-3 Worker"
            )
        return self._state.running().device_facts(chip)

    # -- tracing --------------------------------------------------------------
    def _traced(self, what: str) -> Optional[EngineWorker]:
        if not self._state.config.trace:
            raise RuntimeError(f"Worker.{what}: this Worker records no trace — create it with Worker(..., trace=True)")
        return self._state.core

    def trace_events(self) -> List[TraceEvent]:
        """Every SUBMIT and finished RUN event so far (see simpler.runtime.trace); also after close()."""
        core = self._traced("trace_events")
        return core.trace_events() if core else []

    def trace_clear(self) -> None:
        """Forgets the events recorded so far (the next trace starts empty)."""
        core = self._traced("trace_clear")
        if core:
            core.trace_clear()
        if self._state.tree_trace is not None:
            self._state.tree_trace.clear()

    def write_trace(self, path: str | os.PathLike[str]) -> None:
        """Writes the timeline so far to `path` as Chrome Trace Event Format JSON
        (open it in https://ui.perfetto.dev); RuntimeError unless trace=True.
        With Workers nested below, each is a process of its own under this one
        ('simpler Worker L4/L3[0]', its chips and sub-workers as lanes). The
        file (mode 0600) is written beside `path` and renamed over it: a link
        at `path` is replaced, never written through. OSError when it cannot be."""
        core = self._traced("write_trace")
        events = core.trace_events() if core else []
        below = self._state.tree_trace.timelines() if self._state.tree_trace is not None else self._tree_below
        trace = chrome_trace(
            events,
            self._state.trace_names(),
            num_chips=self.num_chips,
            num_sub_workers=self.num_sub_workers,
            dropped=core.trace_dropped() if core else 0,
            process_name=f"simpler Worker {self.path} (level {self.level})",
            below=below,
        )
        write_chrome_trace(path, trace)

    # -- teardown -------------------------------------------------------------
    def close(self) -> None:
        """Stops every child (no child outlives close()) and closes the buffers this
        Worker created. Idempotent."""
        if os.getpid() != self._state.pid:
            return  # a forked child never tears down its parent's Worker
        if self._state.core is not None:
            was_open = not self._state.core.closed
            if was_open:
                self._state.watch.check(self._state.core, self.path)
            self._state.core.close()
            self._state.watch.stop()
            self._runs.close()
            if was_open and self._state.remote and self._state.parent is None:
                remote.report_lost(self._state)
        if self._state.tree_trace is not None and self._state.parent is None:
            self._tree_below = self._state.tree_trace.timelines()  # write_trace() still shows them after close()
            self._state.tree_trace.remove()
            self._state.tree_trace = None
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
        core = self._state.core
        state = "closed" if core and core.closed else ("running" if core else "not initialized")
        workers = f"num_workers={self.num_workers}" if self.level > 3 else f"num_chips={self.num_chips}"
        where = f"{self.path}, " if self._state.parent is not None else ""
        return f"Worker({where}level={self.level}, {workers}, num_sub_workers={self.num_sub_workers}, {state})"
