"""Worker: one level of the hierarchy (L3 host and above) as running processes.

    w = Worker(level=3, num_sub_workers=2)
    post = w.register(python_fn)      # a sub-worker callable: fn(args: MappedArgs)
    w.init()                          # forks every child before any thread exists
    a = w.create_buffer(n * 4)
    w.run(my_orch)                    # my_orch(orch, args, cfg) only builds the graph
    w.close()                         # also a context manager

How long a waiting thread or child spins before it sleeps on a futex is
`spin`: None (the default) adapts to the observed hand-off times, up to 25 us;
0 never spins (every hand-off wakes a sleeper: ~10-20 us, no CPU while busy
waiting); a number of seconds spins that long every time (the hot regime, for
latency-bound runs). Nothing spins while the Worker is idle beyond that budget.

Callables are registered before init(): the children are forked then and know
exactly what was registered. run() returns when every task has finished, or
raises RuntimeError naming the first failure (task, worker, cause).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, List, Optional

from simpler._core import EngineWorker, TaskKind
from simpler.buffer import AccessMode, Buffer, create_buffer
from simpler.orchestrator import Orchestrator
from simpler.sub_worker import make_dispatcher


@dataclass(frozen=True)
class CallableHandle:
    """What register() returns: the id a task names its callable by."""

    id: int
    kind: TaskKind
    name: str


class Worker:
    def __init__(self, level: int = 3, num_chips: int = 0, num_sub_workers: int = 0, *,
                 task_timeout: Optional[float] = None, blob_capacity: int = 1 << 20,
                 spin: Optional[float] = None):
        if level < 3:
            raise ValueError(f"Worker(level={level}): a Worker is level 3 (a host) or above; level 2 is a chip")
        if num_chips < 0 or num_sub_workers < 0:
            raise ValueError("Worker: num_chips and num_sub_workers must be >= 0")
        if task_timeout is not None and task_timeout <= 0:
            raise ValueError(f"Worker: task_timeout must be > 0 seconds (got {task_timeout})")
        if spin is not None and not 0 <= spin <= 1:
            raise ValueError(f"Worker: spin must be a budget in seconds, 0 <= spin <= 1 (got {spin})")
        self.level = level
        self.num_chips = num_chips
        self.num_sub_workers = num_sub_workers
        self._task_timeout = task_timeout or 0.0
        self._blob_capacity = blob_capacity
        self._spin = spin
        self._sub_callables: List[Callable] = []
        self._chip_callables: list = []
        self._core: Optional[EngineWorker] = None
        self._buffers: List[Buffer] = []
        self._pid = os.getpid()

    # -- set-up ---------------------------------------------------------------
    def register(self, fn) -> CallableHandle:
        """Registers a sub-worker callable `fn(args: MappedArgs)`; returns its handle."""
        if self._core is not None:
            raise RuntimeError("Worker.register: register before init() — the children are forked at init() "
                               "and know only what was registered then")
        if not callable(fn):
            raise TypeError(f"Worker.register: {fn!r} is not callable")
        self._sub_callables.append(fn)
        name = getattr(fn, "__qualname__", repr(fn))
        return CallableHandle(len(self._sub_callables) - 1, TaskKind.SUB, name)

    def init(self) -> "Worker":
        if self._core is not None:
            raise RuntimeError("Worker.init: already initialized")
        dispatch = make_dispatcher(self._sub_callables) if self.num_sub_workers else None
        core = EngineWorker(self.num_chips, self.num_sub_workers, None, dispatch, self._task_timeout,
                            self._blob_capacity, spin_s=self._spin)
        core.init()
        self._core = core
        return self

    def create_buffer(self, nbytes: int, access: AccessMode = AccessMode.READWRITE) -> Buffer:
        """A POSIX shm buffer owned by this Worker (closed with it)."""
        b = create_buffer(nbytes, access)
        self._buffers.append(b)
        return b

    # -- running --------------------------------------------------------------
    def run(self, orch_fn, args=None, cfg=None) -> Orchestrator:
        """Calls orch_fn(orch, args, cfg) to build the graph, then waits for every
        task. If orch_fn raises, the tasks it already submitted still finish first."""
        core = self._running()
        orch = Orchestrator(self)
        try:
            orch_fn(orch, args, cfg)
        except BaseException:
            try:
                core.wait()
            except RuntimeError:
                pass  # the orchestration error is the one to report
            raise
        core.wait()
        return orch

    def _running(self) -> EngineWorker:
        if self._core is None:
            raise RuntimeError("Worker: call init() first")
        if self._core.closed:
            raise RuntimeError("Worker: closed")
        return self._core

    def _check_callable(self, handle, kind: TaskKind) -> CallableHandle:
        if not isinstance(handle, CallableHandle):
            raise TypeError(f"expected a handle from Worker.register, got {handle!r}")
        if handle.kind != kind:
            raise ValueError(f"callable {handle.name!r} is a {handle.kind.name} callable, "
                             f"not a {kind.name} one")
        self._running()
        return handle

    def child_status(self) -> List[str]:
        return self._core.child_status() if self._core else []

    def child_pids(self) -> List[int]:
        return self._core.child_pids() if self._core else []

    # -- teardown -------------------------------------------------------------
    def close(self) -> None:
        """Stops every child (no child outlives close()) and closes the buffers this
        Worker created. Idempotent."""
        if os.getpid() != self._pid:
            return  # a forked child never tears down its parent's Worker
        if self._core is not None:
            self._core.close()
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

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._core and self._core.closed else ("running" if self._core else "not initialized")
        return f"Worker(level={self.level}, num_chips={self.num_chips}, num_sub_workers={self.num_sub_workers}, {state})"
