"""Collectives over a communication domain: all_reduce (sum), all_gather,
reduce_scatter and broadcast of one named window buffer, in place, on FLOAT32,
FLOAT64, FLOAT16, BFLOAT16 or INT32.

Each is a DAG of ordinary chip tasks submitted from an orchestration function
(`orch`), ordered by the engine's dependency inference on the window buffers'
views like any other tasks: no gang scheduling and no barrier, so nothing can
deadlock, and a chip that dies fails its tasks and poisons their dependents
like any task. With n ranks the first `count` elements of the buffer are split
into n chunks of ceil(count / n) elements (the last ones shorter, or empty when
count < n); chunk q is elements [q * c, min((q + 1) * c, count)).

- reduce_scatter: the task on rank r adds chunk r of every peer's buffer into
  its own chunk r (std.sum_n with its own chunk as one of the terms: rank 0 +
  rank 1 + ... + rank n-1, left to right, FLOAT16 / BFLOAT16 in float and
  rounded once). Rank r ends with the sum in chunk r; the other chunks are left
  as they were.
- all_gather: the task on rank r copies chunk q of rank q's buffer into its own
  chunk q, for every q != r (std.copy). Rank r contributes its chunk r.
- all_reduce: reduce_scatter, then all_gather. The reduce tasks touch disjoint
  chunks and run concurrently; inference orders each copy after the reduce that
  wrote its source (read after write) and after the reduce that read its
  destination (write after read).
- broadcast(root): every rank r != root copies the root's first `count`
  elements into its own buffer.

Every function returns the TaskHandles it submitted, in submit order. All
checks run before anything is submitted (TypeError / ValueError naming the
collective and the domain); a refusal submits nothing.
"""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

from simpler._core import CallConfig, DataType, TaskArgs, TaskHandle, TensorArgType, element_size
from simpler.model.arg_checks import check_int, check_type, got
from simpler.model.domain import Domain, GlobalDomain
from simpler.runtime.orchestrator import Orchestrator, callables_of

__all__ = ["COLLECTIVE_DTYPES", "all_gather", "all_reduce", "broadcast", "reduce_scatter"]

# The element types the collectives take (std.sum_n's).
COLLECTIVE_DTYPES: Tuple[DataType, ...] = (
    DataType.FLOAT32,
    DataType.FLOAT64,
    DataType.FLOAT16,
    DataType.BFLOAT16,
    DataType.INT32,
)

# collective_phase's first scalar: which runtime chip callable runs the phase.
PHASE_COPY = 0  # std.copy
PHASE_SUM = 1  # std.sum_n


# A reduce task names n views (n - 1 peers' chunks and its own); a chip kernel task takes at most 32.
_MAX_REDUCE_RANKS = 32


class _Plan:
    """What one collective call operates on, checked: the domain's member chips
    in rank order, the buffer of each, the dtype and the element count."""

    def __init__(self, what: str, orch: Any, dom: Any, name: Any, dtype: Any, count: Any) -> None:
        check_type(f"{what}.orch", orch, Orchestrator)
        check_type(f"{what}.dom", dom, Domain)
        self.what = what
        self.orch = orch
        self.domain_name = dom.name
        if dom.released:
            raise ValueError(
                f"{what}: domain {dom.name!r} was released (its with block ended or release() was "
                "called); its window buffers may not be named any more"
            )
        self.global_domain = isinstance(dom, GlobalDomain)
        if self.global_domain and (orch.worker.level != 4 or callables_of(orch).phase is None):
            raise ValueError(
                f"{what}: domain {dom.name!r} is a global domain; submit its collectives from the "
                "orchestration of the level-4 Worker that allocated it (not from "
                f"{orch.worker.path})"
            )
        self.workers: Tuple[Any, ...] = dom.workers
        workers = dom.workers
        if not isinstance(name, str):
            raise TypeError(
                f"{what}.name: expected a str, the name of one of domain {self.domain_name!r}'s buffers "
                f"(got {got(name)})"
            )
        known = list(dom.buffers[workers[0]])
        if name not in known:
            raise ValueError(
                f"{what}: domain {self.domain_name!r} has no buffer {name!r} (its buffers: "
                f"{', '.join(map(repr, known))})"
            )
        self.name = name
        self.buffers = [dom.buffer(name, chip) for chip in workers]
        check_type(f"{what}.dtype", dtype, DataType)
        if dtype not in COLLECTIVE_DTYPES:
            raise ValueError(
                f"{what}: dtype {dtype.name} is not supported; the collectives take "
                f"{', '.join(d.name for d in COLLECTIVE_DTYPES)}"
            )
        self.dtype = dtype
        self.esize = element_size(dtype)
        nbytes = self.buffers[0].nbytes
        capacity = nbytes // self.esize
        if count is None:
            if capacity == 0:
                raise ValueError(
                    f"{what}: buffer {name!r} of domain {self.domain_name!r} ({nbytes} bytes) holds no "
                    f"{dtype.name} element"
                )
            count = capacity
        count = check_int(f"{what}.count", count, 1)
        if count > capacity:
            raise ValueError(
                f"{what}: count {count} {dtype.name} elements ({count * self.esize} bytes) do not fit "
                f"buffer {name!r} of domain {self.domain_name!r} ({nbytes} bytes, {capacity} elements)"
            )
        self.count = count

    @property
    def size(self) -> int:
        return len(self.workers)

    def chunk(self, q: int) -> Tuple[int, int]:
        """Chunk q's first element and length (0: empty)."""
        c = math.ceil(self.count / self.size)
        begin = min(q * c, self.count)
        return begin, min(begin + c, self.count) - begin

    def view(self, rank: int, begin: int, length: int) -> Any:
        return self.buffers[rank].tensor((length,), self.dtype, byte_offset=begin * self.esize)

    def check_reduce_width(self) -> None:
        if self.size > _MAX_REDUCE_RANKS:
            raise ValueError(
                f"{self.what}: domain {self.domain_name!r} has {self.size} ranks; a reduction task names "
                f"one view per rank and a chip kernel task takes at most {_MAX_REDUCE_RANKS}"
            )

    def submit(self, handle: Any, tasks: Sequence[Tuple[int, TaskArgs]]) -> List[TaskHandle]:
        """One call into the engine for the batch (all or none), task k on rank tasks[k][0]'s chip; for a
        global domain, as a collective_phase task on the rank's L3 child, which runs it on the rank's chip."""
        if not tasks:
            return []
        if self.global_domain:
            table = callables_of(self.orch)
            kind = PHASE_SUM if handle is table.sum else PHASE_COPY
            return list(
                self.orch.submit_many(
                    table.phase,
                    [phase_args(kind, self.workers[r][1], ta) for r, ta in tasks],
                    workers=[self.workers[r][0] for r, _ in tasks],
                )
            )
        return list(self.orch.submit_many(handle, [ta for _, ta in tasks], workers=[self.workers[r] for r, _ in tasks]))


def _reduce_tasks(p: _Plan) -> List[Tuple[int, TaskArgs]]:
    tasks: List[Tuple[int, TaskArgs]] = []
    if p.size == 1:
        return tasks  # one rank: its chunk is the sum already
    for r in range(p.size):
        begin, length = p.chunk(r)
        if length == 0:
            continue
        ta = TaskArgs()
        for q in range(p.size):
            if q != r:
                ta.add_tensor(p.view(q, begin, length), TensorArgType.INPUT)
        ta.add_tensor(p.view(r, begin, length), TensorArgType.INOUT)
        ta.add_scalar(r + 1)  # the own chunk is the (r + 1)-th term: the sum runs in rank order
        tasks.append((r, ta))
    return tasks


def _gather_tasks(p: _Plan) -> List[Tuple[int, TaskArgs]]:
    tasks = []
    for r in range(p.size):
        for q in range(p.size):
            begin, length = p.chunk(q)
            if q == r or length == 0:
                continue
            ta = TaskArgs()
            ta.add_tensor(p.view(q, begin, length), TensorArgType.INPUT)
            ta.add_tensor(p.view(r, begin, length), TensorArgType.OUTPUT_EXISTING)
            tasks.append((r, ta))
    return tasks


def _handles(p: _Plan) -> Tuple[Any, Any]:
    table = callables_of(p.orch)
    return table.sum, table.copy


def reduce_scatter(orch: Any, dom: Any, name: str, dtype: DataType, count: Optional[int] = None) -> List[TaskHandle]:
    """Rank r's chunk r of buffer `name` becomes the sum of every rank's chunk r
    (the first `count` elements, default: the whole buffer). One task per rank
    with a non-empty chunk."""
    p = _Plan("reduce_scatter", orch, dom, name, dtype, count)
    p.check_reduce_width()
    return p.submit(_handles(p)[0], _reduce_tasks(p))


def all_gather(orch: Any, dom: Any, name: str, dtype: DataType, count: Optional[int] = None) -> List[TaskHandle]:
    """Every rank's chunk q of buffer `name` becomes rank q's chunk q. One copy
    task per (rank, other rank's non-empty chunk)."""
    p = _Plan("all_gather", orch, dom, name, dtype, count)
    return p.submit(_handles(p)[1], _gather_tasks(p))


def all_reduce(orch: Any, dom: Any, name: str, dtype: DataType, count: Optional[int] = None) -> List[TaskHandle]:
    """Every rank's buffer `name` (its first `count` elements) becomes the
    elementwise sum over the ranks: reduce_scatter, then all_gather."""
    p = _Plan("all_reduce", orch, dom, name, dtype, count)
    p.check_reduce_width()
    sum_handle, copy_handle = _handles(p)
    return p.submit(sum_handle, _reduce_tasks(p)) + p.submit(copy_handle, _gather_tasks(p))


def broadcast(
    orch: Any, dom: Any, name: str, dtype: DataType, root: int = 0, count: Optional[int] = None
) -> List[TaskHandle]:
    """Every rank's buffer `name` (its first `count` elements) becomes rank
    `root`'s (root is a rank, 0 <= root < dom.size). One copy task per other rank."""
    p = _Plan("broadcast", orch, dom, name, dtype, count)
    root = check_int("broadcast.root", root, 0)
    if root >= p.size:
        raise ValueError(f"broadcast: root {root} is not a rank of domain {p.domain_name!r} (ranks 0 to {p.size - 1})")
    tasks = []
    for r in range(p.size):
        if r == root:
            continue
        ta = TaskArgs()
        ta.add_tensor(p.view(root, 0, p.count), TensorArgType.INPUT)
        ta.add_tensor(p.view(r, 0, p.count), TensorArgType.OUTPUT_EXISTING)
        tasks.append((r, ta))
    return p.submit(_handles(p)[1], tasks)


def collective_phase(orch: Orchestrator, args: TaskArgs, cfg: CallConfig) -> None:
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
    table = callables_of(orch)
    orch.submit_next_level(table.sum if kind == PHASE_SUM else table.copy, ta, worker=chip)


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
