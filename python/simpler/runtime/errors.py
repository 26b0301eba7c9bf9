"""RunError: a run's failure as a value, and the names a failure path uses.

The engine keeps why a run failed as a FailureReport (simpler._core): one
level per Worker from the one whose run failed down to where it happened, each
with the task, the child it ran on, the cause (a code and its text) and how
many tasks that needed it were not run. A next-level Worker's child answers its
parent's task with its own run's report, so nothing reads an error message to
learn where or why; the message is rendered from the fields.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from simpler._core import FailedTask, FailureReport


def child_name(level: int, index: int) -> str:
    """What a failure path calls next-level Worker `index` of a level-`level` Worker: 'L3[0]'."""
    return f"L{level - 1}[{index}]"


class RunError(RuntimeError):
    """A run failed (Worker.run(), a RunFuture, Worker.wait()).

    The fields describe the first task of the run that failed or was not run,
    on the Worker whose run it is: `task`, `run`, `callable` (its registered
    name), `member`, `child_kind` ('chip', 'sub-worker', 'worker') and
    `child_index` (None when it was not run before a child was chosen), and
    `not_run` (the tasks of the run that needed it and were not run); each is
    None when no one task failed (code RAISED, NOT_STARTED or CLOSED).
    `code` and `text` are the cause where it happened — at the bottom of a
    tree, the chip's or sub-worker's: a TaskError name (TASK_FAILED,
    BAD_ARGUMENTS, UNKNOWN_CALLABLE, CHILD_DIED, TIMED_OUT, PROTOCOL, SKIPPED),
    NOT_RUN, NOT_DISPATCHED, RAISED, NOT_STARTED or CLOSED. `path` is the hops
    from the Worker down to where it happened (('L4', 'L3[0]', 'chip 1') at
    the top of a tree; ('chip 1',) on a level-3 Worker), `levels` each
    Worker's part (FailedTask, top first) and `report` the whole
    FailureReport. The message is rendered from these."""

    report: FailureReport
    levels: Tuple[FailedTask, ...]
    path: Tuple[str, ...]
    code: str
    text: str
    task: Optional[int]
    run: Optional[int]
    callable: Optional[str]
    member: Optional[int]
    child_kind: Optional[str]
    child_index: Optional[int]
    not_run: Optional[int]

    def __init__(self, report: FailureReport, head: Optional[str] = None):
        """`head`: the name of the top of a tree of Workers ('L4'), which leads
        the path and the message; None on a Worker that is not one."""
        self.report = report
        self.levels = tuple(report.levels)
        self._head = head
        below = tuple(report.path())
        self.path = ((head,) if head else ()) + below
        top, root = self.levels[0], self.levels[-1]
        self.code, self.text = root.code, root.text
        if top.has_task:
            self.task, self.run, self.member = top.task, top.run, top.member
            self.callable = top.callable or str(top.callable_id)
            self.child_kind, self.child_index, self.not_run = top.child_kind, top.child_index, top.not_run
        else:
            self.task = self.run = self.member = self.child_index = self.not_run = None
            self.callable = self.child_kind = None
        message = report.render()
        if head:
            message = f"{' → '.join(self.path)}: {message}"
        super().__init__(message)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_rebuilt, (self.report.encode(1 << 20), self._head))


def _rebuilt(text: str, head: Optional[str]) -> RunError:
    return RunError(FailureReport.decode(text), head)
