"""GlobalDomain: a communication domain across chips of different level-3
children of one level-4 Worker — what `orch.allocate_global_domain(name,
members=[(l3, chip), ...], window_size, buffers)` returns on an L4's
orchestrator.

The L4 maps one window heap per member slot — one per (local L3 child, chip),
`window_heap_bytes` each, MAP_NORESERVE (address space, no memory until
touched) — before it forks its L3 children; each L3 and its chips inherit them,
so the chips of different L3 children read and write the same bytes. The L4
carves the windows, mints the buffers' identities and frees the windows once
every task naming them has finished, as for a level-3 domain.

The window buffers travel as task arguments: a task the L4 sends to L3 child
`l3` (submit_next_level) may carry any window buffer of a domain that has a
member on `l3`, and the orchestration that runs there names it on its chips
(`args[i]`, or a view of it). The L3 admits a global window tensor only on a
chip that is a member of its domain (peers' windows included); a sub-worker,
a non-member chip and a released domain are refused at submit.

The collectives (`simpler.collectives`) take a GlobalDomain with the L4's
orchestrator: each phase task goes to the L3 child of its rank, which runs it
as one chip task (`collective_phase`); the L4's dependency inference on the
window views orders the phases across children.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Tuple

from simpler._core import CallConfig, EngineWorker, TaskArgs
from simpler.domain import Domain

if TYPE_CHECKING:
    from simpler.orchestrator import Orchestrator

Member = Tuple[int, int]

# collective_phase's first scalar: which runtime chip callable runs the phase.
PHASE_COPY = 0  # std.copy
PHASE_SUM = 1   # std.sum_n


class GlobalDomain(Domain):
    """A live global domain; members are (l3, chip) pairs in rank order."""

    def __init__(self, core: EngineWorker, name: str, members: Sequence[Member], window_size: int,
                 names: Sequence[str], carved: dict, child_level: int) -> None:
        self._child_level = child_level
        super().__init__(core, name, members, window_size, names, carved)

    @property
    def members(self) -> Tuple[Member, ...]:
        return self.workers

    def _member_text(self, chip: Any) -> str:
        l3, c = chip
        return f"L{self._child_level}[{l3}] chip {c}"

    def _release_in_core(self) -> None:
        self._core.release_global_domain(self._id)

    def rank(self, chip: Any) -> int:
        """The dense rank of member `chip`, an (l3, chip) pair."""
        if not (isinstance(chip, tuple) and len(chip) == 2):
            raise TypeError(f"domain {self.name!r}: a member is an (l3, chip) pair (got {chip!r})")
        try:
            return self.workers.index(chip)
        except ValueError:
            members = ", ".join(self._member_text(m) for m in self.workers)
            raise ValueError(f"domain {self.name!r}: {self._member_text(chip)} is not a member ({members})") from None

    def __repr__(self) -> str:
        state = "released" if self.released else "live"
        names = list(next(iter(self.buffers.values())).keys()) if self.buffers else []
        return (f"GlobalDomain({self.name!r}, members {list(self.workers)}, window_size={self.window_size}, "
                f"buffers={names}, {state})")


def collective_phase(orch: "Orchestrator", args: TaskArgs, cfg: CallConfig) -> None:
    """The runtime's own next-level orchestration behind the collectives over a
    GlobalDomain, run on an L3 child: one chip task, std.copy or std.sum_n
    (scalar 0: PHASE_COPY or PHASE_SUM) on chip `scalar 1`, with the task's
    tensors and the scalars after those two."""
    kind, chip = args.scalar(0), args.scalar(1)
    ta = TaskArgs()
    for i in range(args.tensor_count):
        ta.add_tensor(args[i], args.tag(i))
    for k in range(2, args.scalar_count):
        ta.add_scalar(args.scalar(k))
    worker = orch.worker
    orch.submit_next_level(worker._sum_handle if kind == PHASE_SUM else worker._copy_handle, ta, worker=chip)


def phase_args(kind: int, chip: int, ta: TaskArgs) -> TaskArgs:
    """`ta` (a chip task's arguments) as the arguments of a collective_phase task on `chip`."""
    out = TaskArgs()
    for i in range(ta.tensor_count):
        out.add_tensor(ta[i], ta.tag(i))
    out.add_scalar(kind)
    out.add_scalar(chip)
    for k in range(ta.scalar_count):
        out.add_scalar(ta.scalar(k))
    return out
