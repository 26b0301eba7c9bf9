"""Orchestrator.submitted: every task an orchestration submitted, in submit order.

A one-at-a-time submit adds its task's id to a run of ids (SubmittedIds: 8
bytes a task, no Python object kept); a batch (submit_many / submit_sub_many)
adds its TaskHandles whole, so the record costs one entry per batch. Handles
are made only when this sequence is read. Live: it grows with each submit.
Equal to a list, tuple, TaskHandles or SubmittedTasks holding the same handles
in the same order."""

from __future__ import annotations

import operator
from array import array
from bisect import bisect_right
from collections import abc
from typing import Iterator, List, Sequence, Union, overload

from simpler._core import TaskHandle, TaskHandles


class SubmittedIds:
    """One-at-a-time submits in a row, of one run: their task ids (8 bytes each)."""

    __slots__ = ("ids", "run")

    def __init__(self, run: int) -> None:
        self.run = run
        self.ids = array("Q")

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> TaskHandle:
        return TaskHandle(self.ids[i], self.run)

    def __iter__(self) -> Iterator[TaskHandle]:
        run = self.run
        return (TaskHandle(i, run) for i in self.ids)


Part = Union[SubmittedIds, TaskHandles]

# TaskHandles is a C++ type: it has every method of a Sequence; this makes isinstance(x, Sequence) say so.
abc.Sequence.register(TaskHandles)


class SubmittedTasks(Sequence[TaskHandle]):
    """A read-only sequence of TaskHandle over the Orchestrator's submits."""

    __slots__ = ("_ends", "_parts")

    def __init__(self, parts: List[Part]) -> None:
        self._parts = parts  # the Orchestrator's record, appended to by each submit
        self._ends: List[int] = []  # _ends[k]: how many tasks parts[0..k] hold (parts[:len(_ends)] counted)

    def _counted(self) -> List[int]:
        ends, parts = self._ends, self._parts
        total = ends[-1] if ends else 0
        # A part of ids may still grow: it is counted again (it is always the last one counted).
        if ends and isinstance(parts[len(ends) - 1], SubmittedIds):
            ends.pop()
            total = ends[-1] if ends else 0
        for k in range(len(ends), len(parts)):
            total += len(parts[k])
            ends.append(total)
        return ends

    def __len__(self) -> int:
        ends = self._counted()
        return ends[-1] if ends else 0

    @overload
    def __getitem__(self, i: int) -> TaskHandle: ...

    @overload
    def __getitem__(self, i: slice) -> List[TaskHandle]: ...

    def __getitem__(self, i: "int | slice") -> "TaskHandle | List[TaskHandle]":
        if isinstance(i, slice):
            return list(self)[i]
        ends = self._counted()
        n = ends[-1] if ends else 0
        index = operator.index(i)
        at = index + n if index < 0 else index
        if not 0 <= at < n:
            raise IndexError(f"Orchestrator.submitted index {index} out of range ({n} tasks submitted)")
        k = bisect_right(ends, at)
        return self._parts[k][at - (ends[k - 1] if k else 0)]

    def __iter__(self) -> Iterator[TaskHandle]:
        for p in self._parts:
            yield from p

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SubmittedTasks, TaskHandles, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # unhashable, as the list it stands for

    def __repr__(self) -> str:
        n = len(self)
        if n == 0:
            return "SubmittedTasks(0 tasks)"
        if n == 1:
            return f"SubmittedTasks(1 task: {self[0].name()})"
        return f"SubmittedTasks({n} tasks: {self[0].name()}, ..., {self[-1].name()})"
