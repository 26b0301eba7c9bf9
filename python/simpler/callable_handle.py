"""CallableHandle: what Worker.register returns — the id a task names its
callable by, its kind (NEXT_LEVEL for a chip orchestration, SUB for a Python
sub-worker callable), its name (for messages) and the Worker that registered it
(`worker_serial`: ids are per Worker, so another Worker refuses the handle)."""

from __future__ import annotations

from dataclasses import dataclass

from simpler._core import TaskKind


@dataclass(frozen=True)
class CallableHandle:
    id: int
    kind: TaskKind
    name: str
    worker_serial: int
