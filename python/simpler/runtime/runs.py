"""A Worker's runs: Worker.run, Worker.submit and the RunFuture it returns.

A Worker builds its runs one after another, in the order they were asked for
(Worker.submit or Worker.run): run N's orchestration function has returned
before run N + 1's starts, so a later run's tasks are ordered against every
task of the earlier runs already submitted (dependencies are inferred across
runs). Building is all that is serialized: once built, any number of runs are
in flight at once, and each finishes on its own.

- RunQueue (one per Worker) holds the runs asked for and not yet built. A
  submitted run is built on the Worker's orchestration thread; a run()
  (RunQueue.run) builds its run on the caller's thread once the runs asked for
  before it are built, then waits for its tasks in slices of WAIT_SLICE_S, so
  that Ctrl-C is seen promptly.
  Both threads start at the first submit().
- The completion thread waits (asleep in the engine, GIL released) for
  submitted runs to finish and completes each one's RunFuture with that run's
  outcome alone.
- RunFuture is a concurrent.futures.Future (asyncio.wrap_future accepts it),
  plus wait(timeout).
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Optional, Tuple, Union

from simpler._core import ChildKind, EngineRunError, FailureReport
from simpler.model.arg_checks import got
from simpler.runtime.forwarded import ForwardedScope
from simpler.runtime.orchestrator import Orchestrator, end_run
from simpler.runtime.state import WAIT_SLICE_S, RuntimeState, WorkerView

if TYPE_CHECKING:
    from simpler._core import EngineWorker

OrchFn = Callable[[Orchestrator, Any, Any], None]

_CLOSED_BEFORE_START = "Worker.submit: the Worker was closed before the run started"


class RunFuture(concurrent.futures.Future):
    """One submitted run (Worker.submit). result() is what Worker.run() returns
    (the run's Orchestrator) and raises what it raises: the orchestration
    function's exception, or RunError (a RuntimeError) for the run's first failure.
    cancel() succeeds only before the run's orchestration function has
    started (running() is then True until the run's tasks have finished)."""

    def __init__(self, queue: "RunQueue") -> None:
        super().__init__()
        self._queue = queue
        self._built = False  # its orchestration function has returned

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the run has finished (or was cancelled), at most `timeout`
        seconds (None: for ever); returns whether it has."""
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(f"RunFuture.wait.timeout: expected seconds or None (got {got(timeout)})")
            if not timeout >= 0:
                raise ValueError(f"RunFuture.wait.timeout: seconds >= 0, or None (got {timeout!r})")
        self._queue.check_waitable(self, "wait")
        done, _ = concurrent.futures.wait([self], timeout)
        return bool(done)

    def result(self, timeout: Optional[float] = None) -> Any:
        """The run's Orchestrator once the run has finished, as Worker.run() returns it; raises what
        Worker.run() raises (RunError for the run's first failure), CancelledError for a cancelled
        run, TimeoutError when `timeout` seconds pass first (None: waits for ever)."""
        self._queue.check_waitable(self, "result")
        return super().result(timeout)

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """What result() would raise once the run has finished (None for a run that succeeded);
        CancelledError for a cancelled run, TimeoutError when `timeout` seconds pass first."""
        self._queue.check_waitable(self, "exception")
        return super().exception(timeout)


class _Job:
    """A submitted run, waiting for the orchestration thread."""

    __slots__ = ("args", "cfg", "fn", "future")

    def __init__(self, fn: OrchFn, args: Any, cfg: Any, future: RunFuture) -> None:
        self.fn, self.args, self.cfg, self.future = fn, args, cfg, future


class _Turn:
    """A run() waiting for its turn to build on its caller's thread."""


_Pending = Tuple[RunFuture, Orchestrator, Optional[BaseException]]


class RunQueue:
    """The runs of one Worker asked for and not yet built, the orchestration
    thread that builds the submitted ones, and the completion thread that
    completes their futures."""

    def __init__(self, state: RuntimeState, worker: WorkerView) -> None:
        self._state = state
        self._worker = worker  # what each run's Orchestrator.worker is
        # _cond's lock, taken directly where nothing waits: a Lock's own `with` runs in C, a
        # Condition's in Python (begin_turn and end_turn, twice a run, cost ~0.3 µs more).
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._queue: Deque[Union[_Job, _Turn]] = deque()
        self._building = False  # a run is being built (on either thread)
        self._closed = False
        self._builder: Optional[threading.Thread] = None
        self._completer: Optional[threading.Thread] = None
        # Built, submitted runs not yet finished, by run number; guarded by _lock.
        self._lock = threading.Lock()
        self._pending: Dict[int, _Pending] = {}
        self._completer_gone = False  # the Worker closed and the completion thread reported what was left
        # The thread running an orchestration function of this Worker (runs build one at a time), else None.
        self._building_thread: Optional[int] = None

    # -- asking for runs ----------------------------------------------------------
    def check_not_nested(self, what: str) -> None:
        if self._building_thread == threading.get_ident():
            raise RuntimeError(
                f"Worker.{what}: a run is already in progress on this Worker ({what}() called from "
                "inside its orchestration function; runs do not nest)"
            )

    def submit(self, fn: OrchFn, args: Any, cfg: Any) -> RunFuture:
        future = RunFuture(self)
        with self._cond:
            if self._closed:
                raise RuntimeError("Worker: closed; create a new Worker")
            if self._builder is None:
                self._builder = threading.Thread(
                    target=self._build_loop, name=f"simpler {self._state.path} runs", daemon=True
                )
                self._completer = threading.Thread(
                    target=self._complete_loop, name=f"simpler {self._state.path} run completion", daemon=True
                )
                self._builder.start()
                self._completer.start()
            self._queue.append(_Job(fn, args, cfg, future))
            self._cond.notify_all()
        return future

    def begin_turn(self) -> None:
        """Entered before a run() builds on the caller's thread, once every run
        asked for before it is built; end_turn() leaves it (run() pairs them in
        try/finally: a generator context manager cost a microsecond a run)."""
        with self._mutex:
            if self._queue or self._building:
                self._wait_turn()
            self._building = True
        self._building_thread = threading.get_ident()

    def _wait_turn(self) -> None:
        """Queues a ticket and waits (holding _cond) until it is first and no run is building."""
        ticket = _Turn()
        self._queue.append(ticket)
        try:
            while self._queue[0] is not ticket or self._building:
                self._cond.wait()
        except BaseException:
            self._queue.remove(ticket)
            self._cond.notify_all()
            raise
        self._queue.popleft()

    def end_turn(self) -> None:
        self._building_thread = None
        with self._mutex:
            self._building = False
            if self._queue:  # every waiter on _cond waits for a queued run or ticket: none waits on an empty queue
                self._cond.notify_all()

    def check_waitable(self, future: RunFuture, what: str) -> None:
        """RuntimeError where waiting for `future` could never end: on the
        orchestration thread for a run not yet built (it is built after the
        current one), or on the completion thread (it completes the futures)."""
        if future.done():
            return
        current = threading.current_thread()
        if current is self._builder and not future._built:
            raise RuntimeError(
                f"RunFuture.{what}: called from an orchestration function for a run not built yet "
                "(this run or a later one); runs are built in submit order, so it would wait for ever"
            )
        if current is self._completer:
            raise RuntimeError(
                f"RunFuture.{what}: called from a done-callback for a run that has not finished; the "
                "thread that runs done-callbacks is the one that completes the runs"
            )

    # -- a run built on the caller's thread -------------------------------------------
    def run(self, orch_fn: OrchFn, args: Any, cfg: Any, scope: Optional[ForwardedScope]) -> Orchestrator:
        """Worker.run (see its docstring); in a nested run `scope` holds every
        submit to the views the parent's task forwarded."""
        core = self._state.running()
        self.check_not_nested("run")
        error: Optional[BaseException] = None
        self.begin_turn()
        try:
            orch = Orchestrator(self._state, self._worker, scope, core)
            try:
                try:
                    orch_fn(orch, args, cfg)
                except BaseException as e:  # noqa: BLE001 - raised below, once the run has ended
                    error = e
                finally:
                    end_run(orch)
            finally:
                run = core.end_run(False)
        finally:
            self.end_turn()
        report: Optional[FailureReport] = None
        try:
            if isinstance(error, KeyboardInterrupt):
                raise error  # Ctrl-C while orch_fn built the graph: cancelled without waiting
            try:
                if not core.wait_run(run, WAIT_SLICE_S):  # the first slice inline: most runs end in it
                    _wait(core, run)
            except EngineRunError as e:
                report = e.report  # kept alone: no local holds the exception in a cycle
            failed = self._state.run_outcome(report)
        except KeyboardInterrupt as interrupt:
            # wherever it struck: in orch_fn or in the wait
            _cancel(core, run, interrupt)
            raise
        raised = error if error is not None else failed  # the orchestration error is the one to report
        if raised is not None:
            # No local of this frame keeps the exception once it is raised: its
            # traceback holds the frame, and a cycle would keep the run's
            # arguments (and the buffers they view) alive until a gc pass.
            error = failed = None
            try:
                raise raised
            finally:
                raised = None
        return orch

    def run_forwarded(self, orch_fn: OrchFn, args: Any, cfg: Any, scope: ForwardedScope) -> None:
        """One run of a nested Worker for its parent's task: run(), with every
        submit held to the views the parent's task forwarded. In a traced tree
        the run's events go to the tree's record for the top's write_trace()."""
        state = self._state
        try:
            self.run(orch_fn, args, cfg, scope)
        finally:
            record, core, config = state.tree_trace, state.core, state.config
            if record is not None and core is not None and config.trace:
                events = core.trace_events()
                core.trace_clear()
                record.append(
                    state.path,
                    os.getpid(),
                    state.trace_names(),
                    {
                        ChildKind.CHIP: state.num_chips,
                        ChildKind.SUB_WORKER: state.num_sub_workers,
                        ChildKind.WORKER: state.num_workers,
                    },
                    events,
                )
            if record is not None and core is not None and config.record_edges:
                log = core.take_edge_log()
                record.append_edges(state.path, log.edges, log.dropped)

    # -- the orchestration thread -----------------------------------------------
    def _build_loop(self) -> None:
        while True:
            with self._cond:
                while not (self._queue and isinstance(self._queue[0], _Job) and not self._building):
                    if self._closed and not self._queue:
                        return
                    self._cond.wait()
                job = self._queue.popleft()
                assert isinstance(job, _Job)
                self._building = True
            try:
                self._build(job)
            finally:
                with self._cond:
                    self._building = False
                    self._cond.notify_all()

    def _build(self, job: _Job) -> None:
        future = job.future
        if not future.set_running_or_notify_cancel():
            return
        state = self._state
        try:
            if state.core is not None and state.core.closed:
                raise RuntimeError(_CLOSED_BEFORE_START)
            core = state.running()
            orch = Orchestrator(state, self._worker, None, core)
        except BaseException as e:  # noqa: BLE001 - the future carries it
            future._built = True
            future.set_exception(e)
            return
        error: Optional[BaseException] = None
        self._building_thread = threading.get_ident()
        try:
            job.fn(orch, job.args, job.cfg)
        except BaseException as e:  # noqa: BLE001 - the run's outcome, once its submitted tasks have finished
            error = e
        finally:
            self._building_thread = None
            end_run(orch)
        with self._lock:
            run = core.end_run(True)
            future._built = True
            direct = self._completer_gone
            if not direct:
                self._pending[run] = (future, orch, error)
        if direct:  # the Worker closed and the completion thread is gone: the outcome is known now
            report: Optional[FailureReport] = None
            try:
                core.wait_run(run)
            except EngineRunError as e:
                report = e.report
            _complete(state, future, orch, error, report)

    # -- the completion thread --------------------------------------------------
    def _complete_loop(self) -> None:
        core = self._state.core
        assert core is not None
        while True:
            runs, closed = core.take_finished_runs(None)
            with self._lock:
                if closed:
                    self._completer_gone = True
                    runs += core.take_finished_runs(0)[0]  # those ended since, before the flag was set
                done = [(self._pending.pop(run), report) for run, report in runs if run in self._pending]
            for (future, orch, error), report in done:
                _complete(self._state, future, orch, error, report)
            if closed:
                return

    # -- close ------------------------------------------------------------------
    def close(self) -> None:
        """After the Worker's engine closed: the runs not yet built fail, and the
        threads end (each is joined unless it is the caller, or the
        orchestration thread is still in an orchestration function)."""
        with self._cond:
            self._closed = True
            waiting = [j for j in self._queue if isinstance(j, _Job)]
            for j in waiting:
                self._queue.remove(j)
            building = self._building
            self._cond.notify_all()
        for j in waiting:
            if j.future.set_running_or_notify_cancel():
                j.future.set_exception(RuntimeError(_CLOSED_BEFORE_START))
        current = threading.current_thread()
        threads: List[Optional[threading.Thread]] = [self._completer]
        if not building:
            threads.append(self._builder)
        for t in threads:
            if t is not None and t is not current:
                t.join()


def _complete(
    state: RuntimeState,
    future: RunFuture,
    orch: Orchestrator,
    error: Optional[BaseException],
    report: Optional[FailureReport],
) -> None:
    """A finished run's future: the orchestration function's exception, else
    the run's failure (a RunError), else the Orchestrator."""
    failure = state.run_outcome(report)
    if error is not None:
        future.set_exception(error)
    elif failure is not None:
        future.set_exception(failure)
    else:
        future.set_result(orch)


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
    while not core.wait_run(run, WAIT_SLICE_S):
        pass
