"""CallableHandle: what Worker.register returns — the id a task names its
callable by, the kind of child it runs on (`runs_on`: CHIP for a chip
orchestration, WORKER for an orchestration function a next-level Worker runs,
SUB_WORKER for a Python sub-worker callable), its name (for messages) and the
Worker tree that registered it (`worker_serial`: ids are per tree, so another
Worker refuses the handle; the Workers nested under the one that registered
share its serial)."""

from __future__ import annotations

from dataclasses import dataclass

from simpler._core import ChildKind, TaskKind


@dataclass(frozen=True)
class CallableHandle:
    """What Worker.register returns, and what a submit names a callable by: its `id` within the
    Worker, the kind of child it `runs_on`, its `name` (as errors and traces say it), and the Worker
    it belongs to (another Worker refuses it)."""

    id: int
    runs_on: ChildKind
    name: str
    worker_serial: int

    @property
    def kind(self) -> TaskKind:
        """SUB for a sub-worker callable, NEXT_LEVEL for the rest."""
        return TaskKind.SUB if self.runs_on == ChildKind.SUB_WORKER else TaskKind.NEXT_LEVEL

    def describe(self) -> str:
        """'chip orchestration', 'next-level Worker orchestration' or 'sub-worker callable'."""
        return _DESCRIPTIONS[self.runs_on]


_DESCRIPTIONS = {
    ChildKind.CHIP: "chip orchestration",
    ChildKind.WORKER: "next-level Worker orchestration",
    ChildKind.SUB_WORKER: "sub-worker callable",
}
