"""RuntimeState: what one Worker's machinery shares, below the Worker itself.

The Worker (simpler.worker) is the user's face: options, lifecycle, buffers,
run and submit. What its parts need of it (the Orchestrator, the run queue,
registration, the child side of a nested or remote Worker) is this object:
the engine, the level and the path, the callables, the place in the tree, and
the checks every entry point makes. None of them holds the Worker.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Protocol

from simpler._core import ChildKind, EngineWorker, FailureReport, TaskKind, WorkerConfig, current_process_id
from simpler.model.callable_handle import CallableHandle
from simpler.runtime.callables import CallableTable
from simpler.runtime.errors import RunError
from simpler.runtime.log import ChildWatch, logger
from simpler.runtime.trace import TreeTrace

# How often a waiting run() or register() returns to the interpreter, so that Ctrl-C (a Python signal
# handler runs only between bytecodes of the main thread) is seen promptly.
WAIT_SLICE_S = 0.05


class WorkerView(Protocol):
    """What Orchestrator.worker is: the Worker an orchestration runs on, as a
    running orchestration may read it."""

    @property
    def level(self) -> int: ...

    @property
    def path(self) -> str: ...

    @property
    def num_chips(self) -> int: ...

    @property
    def num_sub_workers(self) -> int: ...

    @property
    def num_workers(self) -> int: ...

    @property
    def config(self) -> WorkerConfig: ...


class RuntimeState:
    """One Worker's state: its options (`config`), the engine once init() made
    it (`core`), its place in a tree of Workers and the callables its tasks name."""

    def __init__(self, level: int, config: WorkerConfig) -> None:
        self.level = level
        self.config = config
        self.pid = os.getpid()  # the process that owns the Worker (a child's, once adopted)
        self.callables = CallableTable()
        # How failure paths and repr name this Worker: 'L4' at the top, 'L3[0]' as child 0 of an L4.
        self.path_name = f"L{level}"
        self.path = self.path_name  # from the top: 'L4/L3[0]'
        self.parent: Optional[RuntimeState] = None  # the Worker this one was added to
        self.children: List[RuntimeState] = []  # next-level Workers (add_worker)
        # Remote next-level Workers (add_remote_workers): the options of each, children after the local ones.
        self.remote: List[Dict[str, Any]] = []
        self.global_first_slot: List[int] = []  # by local child: the member slot of its chip 0
        self.forking_core: Optional[EngineWorker] = None  # during init(): what the children inherit
        self.core: Optional[EngineWorker] = None
        self.watch = ChildWatch()  # logs the children's start and losses (simpler.runtime.log)
        self.tree_trace: Optional[TreeTrace] = None  # traced, with Workers below: where they leave their timelines
        # runs_on of each TaskKind, built once: every run's Orchestrator reads it (the level never changes).
        self.runs_on_by_kind = {k: self.runs_on(k) for k in (TaskKind.NEXT_LEVEL, TaskKind.SUB)}

    @property
    def num_chips(self) -> int:
        return int(self.config.num_chips)

    @property
    def num_sub_workers(self) -> int:
        return int(self.config.num_sub_workers)

    @property
    def num_workers(self) -> int:
        """Next-level Worker children, local and remote."""
        return len(self.children) + len(self.remote)

    # -- the checks of every entry point ------------------------------------------
    def check_process(self, what: str) -> None:
        # current_process_id(): os.getpid() without its system call, twice per run
        if current_process_id() != self.pid:
            raise RuntimeError(
                f"Worker.{what}: this process (pid {os.getpid()}) was forked from the Worker's "
                f"owner (pid {self.pid}); a Worker runs only in the process that created it"
            )

    def running(self) -> EngineWorker:
        """The engine of an initialized, open Worker in its own process; RuntimeError otherwise."""
        self.check_process("run")
        if self.core is None:
            raise RuntimeError("Worker: call init() first")
        if self.core.closed:
            raise RuntimeError("Worker: closed; create a new Worker")
        return self.core

    def running_top(self, what: str) -> EngineWorker:
        """running(), on a Worker that is not a child of another (whose runs are its parent's tasks)."""
        if self.parent is not None:
            raise RuntimeError(
                f"Worker.{what}: this Worker is {self.path}, a child of another Worker; its runs are "
                "its parent's tasks (submit on the top Worker)"
            )
        return self.running()

    def runs_on(self, kind: TaskKind) -> ChildKind:
        """The kind of child a `kind` task of this Worker runs on."""
        if kind == TaskKind.SUB:
            return ChildKind.SUB_WORKER
        return ChildKind.WORKER if self.level > 3 else ChildKind.CHIP

    def check_callable(self, handle: object, kind: TaskKind) -> CallableHandle:
        """`handle` when it names a callable of this Worker that runs on the child `kind` tasks run on."""
        if not isinstance(handle, CallableHandle):
            raise TypeError(f"expected a handle from Worker.register, got {handle!r}")
        if handle.worker_serial != self.callables.serial:
            raise ValueError(
                f"callable {handle.name!r} was registered on another Worker; a handle names a "
                "callable of the Worker that registered it (register it on this one too)"
            )
        expected = self.runs_on(kind)
        if handle.runs_on != expected:
            runs = {
                ChildKind.CHIP: "chips",
                ChildKind.WORKER: f"level-{self.level - 1} Workers",
                ChildKind.SUB_WORKER: "sub-workers",
            }[expected]
            raise ValueError(
                f"callable {handle.name!r} is a {handle.describe()}; this {kind.name} submit of "
                f"{self.path} runs on its {runs}"
            )
        self.running()
        return handle

    # -- names -------------------------------------------------------------------
    def callable_name(self, kind: TaskKind, callable_id: int) -> str:
        return self.callables.name(kind, callable_id, self.level)

    def trace_names(self) -> Dict[Any, str]:
        """What a trace calls each callable, by (kind, id)."""
        table = self.callables
        next_level = len(table.orchestrations) if self.level > 3 else len(table.chip)
        names = {(TaskKind.NEXT_LEVEL, i): self.callable_name(TaskKind.NEXT_LEVEL, i) for i in range(next_level)}
        names.update({(TaskKind.SUB, i): self.callable_name(TaskKind.SUB, i) for i in range(len(table.sub))})
        return names

    def children_text(self) -> str:
        """'2 chips, 1 sub-worker' (what init() started)."""
        counts = [
            (self.num_chips, "chip"),
            (self.num_sub_workers, "sub-worker"),
            (len(self.children), f"level-{self.level - 1} Worker"),
            (len(self.remote), "remote Worker"),
        ]
        return ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts if n) or "no children"

    # -- after a run -------------------------------------------------------------
    def run_outcome(self, failure: Optional[FailureReport]) -> Optional[RunError]:
        """After a run's wait (run() and the submit completion thread): logs the
        children lost meanwhile, and for a failed run returns its RunError — at
        the top of a tree of Workers with its path from here ('L4 → L3[0] →
        chip 1: ...'; a nested Worker's child hands its report to its parent
        instead) — logged (INFO). None for a run that succeeded."""
        if self.core is not None:
            self.watch.check(self.core, self.path)
        if failure is None:
            return None
        error = RunError(failure, self.path_name if self.num_workers and self.parent is None else None)
        logger.info("%s: run failed: %s", self.path, error)
        return error
