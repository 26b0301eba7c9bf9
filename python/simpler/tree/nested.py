"""Nested Workers: the child side of a next-level Worker lane.

A level-N Worker (N >= 4) takes level-(N-1) Workers as its next-level children
(Worker.add_worker). Its init() forks each child, and in the child process
`start_child` starts that child's own Worker (which forks its chips and
sub-workers) and returns the `NextLevelServer` that runs every task the parent
sends: an orchestration function `fn(orch, args, cfg)` registered on the top
Worker, run as a whole `Worker.run` of the child.

The nested run's arguments and the views they allow are
simpler.runtime.forwarded's; a failure goes back up as a value, the child
run's FailureReport (encoded into the lane's result, FAILED_BELOW), which the
parent's own report takes in below its task (simpler.runtime.errors).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

from simpler._core import CallConfig, FailureReport
from simpler.model.buffer import forget_imports
from simpler.model.task_interface import TaskArgs
from simpler.runtime.errors import RunError
from simpler.runtime.forwarded import ForwardedScope, forwarded_args
from simpler.runtime.state import RuntimeState


@dataclass(frozen=True)
class ChildWorker:
    """What the child side of a next-level lane needs of the child's Worker,
    handed to it by that Worker: its state, how to start and close it, and how
    to run one task of its parent (RunQueue.run_forwarded)."""

    state: RuntimeState
    init: Callable[[], object]
    close: Callable[[], None]
    run: Callable[[Callable[..., Any], TaskArgs, CallConfig, ForwardedScope], None]


class NextLevelServer:
    """What a nested Worker's child process calls per task of its parent:
    runs orchestration `callable_id` as one run of the child's Worker; returns
    None on success, else the run's FailureReport (the parent's engine puts it
    below its own task's part)."""

    def __init__(self, child: ChildWorker):
        self._child = child
        self._orchestrations = list(child.state.callables.orchestrations)

    def __call__(self, callable_id: int, blob: bytes, config: bytes) -> Optional[FailureReport]:
        level = self._child.state.level
        try:
            fn = self._orchestrations[callable_id]
        except IndexError:
            return FailureReport.of_worker(level, "UNKNOWN_CALLABLE", f"unknown orchestration {callable_id}")
        try:
            cfg = CallConfig.from_bytes(config)
            args, scope = forwarded_args(blob, cfg)
            self._child.run(fn, args, cfg, scope)
        except RunError as e:
            return e.report
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent as data
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
            name = getattr(fn, "__qualname__", repr(fn))
            return FailureReport.of_worker(level, "RAISED", f"the orchestration {name!r} raised:\n{text}")
        return None


Dispatch = Callable[[int, bytes, bytes], Optional[FailureReport]]


def start_child(child: ChildWorker) -> Tuple[Dispatch, Callable[[], None], Callable[[list], None]]:
    """Called in a next-level child right after the parent forked it (and the
    child's Worker adopted its place): starts the child's Worker and returns
    (dispatch, close, forget) for its lane. A child that cannot start answers
    every task with why. forget(ids): the owner freed these backings; they go
    from this process's import cache and, through the child's own Worker, from
    every lane below."""
    try:
        child.init()
    except BaseException as e:  # noqa: BLE001 - reported on every task instead
        why = FailureReport.of_worker(
            child.state.level, "NOT_STARTED", f"the Worker did not start: {type(e).__name__}: {e}"
        )

        def refuse(callable_id: int, blob: bytes, config: bytes) -> FailureReport:
            return why

        return refuse, child.close, forget_imports

    return NextLevelServer(child), child.close, forget_below(child.state)


def forget_below(state: RuntimeState) -> Callable[[list], None]:
    """A lane's forget(ids) in a child whose Worker is `state`'s."""

    def forget(identities: list) -> None:
        forget_imports(identities)
        core = state.core
        if core is not None and not core.closed:
            core.forget(identities)

    return forget
