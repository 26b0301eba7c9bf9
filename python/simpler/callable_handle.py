"""CallableHandle: what Worker.register returns — the id a task names its
callable by, its kind (NEXT_LEVEL for a chip orchestration, SUB for a Python
sub-worker callable) and its name (for messages)."""

from __future__ import annotations

from dataclasses import dataclass

from simpler._core import TaskKind


@dataclass(frozen=True)
class CallableHandle:
    id: int
    kind: TaskKind
    name: str
