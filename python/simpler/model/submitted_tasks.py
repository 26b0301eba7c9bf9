"""Orchestrator.submitted: every task an orchestration submitted, in submit order.

A one-at-a-time submit adds its task's id to a part of ids (SubmittedIds):
consecutive ids are kept as a range (16 bytes however long: a run streaming
its tasks one at a time keeps a few bytes, not a few per task), an id that does
not follow the one before as itself (8 bytes, the most a task costs). No Python
object is kept per task. A batch (submit_many / submit_sub_many) adds its
TaskHandles whole, so the record costs one entry per batch. Handles are made
only when this sequence is read. Live: it grows with each submit. Equal to a
list, tuple, TaskHandles or SubmittedTasks holding the same handles in the
same order."""

from __future__ import annotations

import operator
from array import array
from bisect import bisect_right
from collections import abc
from typing import Iterator, List, Sequence, Tuple, Union, overload

from simpler._core import TaskHandle, TaskHandles

# An entry of SubmittedIds.entries with this bit set says that the entry before it (an id) is the
# first of a range of 1 + (entry & ~RANGE_MARK) ids (task ids count up from 1 and never reach it).
RANGE_MARK = 1 << 63


class SubmittedIds:
    """One-at-a-time submits in a row, of one run: their task ids. `entries` holds each id that
    does not follow the one before it, and after an id that starts a range of consecutive ids, once
    the range is closed, RANGE_MARK | (its length - 1). The last id in `entries` starts the open
    range, which ends (exclusive) at `end`: the hot path (Orchestrator._submit_one) grows it by
    `end += 1` when the next id is `end`, and calls add() otherwise."""

    __slots__ = ("_firsts", "_next_first", "_parsed", "_starts", "closed", "end", "entries", "run")

    def __init__(self, run: int, first: int) -> None:
        self.run = run
        self.entries = array("Q", [first])
        self.end = first + 1
        self.closed = 0  # ids in the closed ranges (all but the open one)
        # The closed ranges as read so far: each one's first index in this part and its first id;
        # `_parsed` entries are read (the open range's start never is), and the next range read
        # starts at index `_next_first`.
        self._firsts = array("Q")
        self._starts = array("Q")
        self._parsed = 0
        self._next_first = 0

    def add(self, task_id: int) -> None:
        """Records task_id after the ids recorded so far."""
        if task_id == self.end:
            self.end += 1
            return
        start = self.entries[-1]
        if self.end - start > 1:
            self.entries.append(RANGE_MARK | (self.end - start - 1))
        self.closed += self.end - start
        self.entries.append(task_id)
        self.end = task_id + 1

    def __len__(self) -> int:
        return self.closed + self.end - self.entries[-1]

    def _ranges(self) -> Tuple[array, array]:
        """The closed ranges' first indices and first ids, reading the entries added since last time."""
        entries, firsts, starts = self.entries, self._firsts, self._starts
        last = len(entries) - 1  # the open range's start (a mark is never last)
        k, first = self._parsed, self._next_first
        while k < last:
            firsts.append(first)
            starts.append(entries[k])
            if entries[k + 1] & RANGE_MARK:
                first += 1 + (entries[k + 1] & ~RANGE_MARK)
                k += 2
            else:
                first += 1
                k += 1
        self._parsed, self._next_first = k, first
        return firsts, starts

    def __getitem__(self, i: int) -> TaskHandle:
        n = len(self)
        at = i + n if i < 0 else i
        if not 0 <= at < n:
            raise IndexError(f"submitted ids index {i} out of range ({n} tasks)")
        if at >= self.closed:
            return TaskHandle(self.entries[-1] + at - self.closed, self.run)
        firsts, starts = self._ranges()
        r = bisect_right(firsts, at) - 1
        return TaskHandle(starts[r] + at - firsts[r], self.run)

    def __iter__(self) -> Iterator[TaskHandle]:
        run = self.run
        firsts, starts = self._ranges()
        closed = len(starts)
        for r in range(closed):  # a closed range is as long as the distance to the next one's index
            length = (firsts[r + 1] if r + 1 < closed else self.closed) - firsts[r]
            yield from (TaskHandle(t, run) for t in range(starts[r], starts[r] + length))
        yield from (TaskHandle(t, run) for t in range(self.entries[-1], self.end))


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
