"""The model a chaos program is checked against: its tasks applied in NumPy,
one at a time in submission order (a valid serial order: the runtime may run
tasks concurrently only where no dependency orders them, so every byte must
come out as here). The runtime's own kernels compute the same float32
operations elementwise, so the bytes must match exactly.

With a fault, `evaluate` replays what the Worker process logged (the buffers
it created and released, the ops whose submits it accepted) with each op's
outcome from the Worker's trace: an op that ran is applied; one that failed
leaves its output unknown (it may have written part of it); one that did not
run leaves its output as it was. An op that ran although an op before it that
it depends on (a view both name, one writing) failed or did not run is a
dependency the runtime dropped; an op that failed or did not run must be one
the fault touched, or depend on one that failed or did not run."""

from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np

from program import FOLD_MODULUS, Op, Program, View


def start_values(program: Program, buf: int) -> np.ndarray:
    """The bytes buffer `buf` starts with: small integers drawn from the seed."""
    rows, cols = program.buffers[buf]
    rng = np.random.default_rng([program.seed, buf])
    return rng.integers(0, 1000, size=(rows, cols)).astype(np.float32)


def view_of(arr: np.ndarray, v: View) -> np.ndarray:
    """The (h, w) NumPy view of `arr` that View `v` names."""
    if v.transposed:
        return arr[v.r0 : v.r0 + (v.w - 1) * v.rstep + 1 : v.rstep, v.c0 : v.c0 + (v.h - 1) * v.cstep + 1 : v.cstep].T
    return arr[v.r0 : v.r0 + (v.h - 1) * v.rstep + 1 : v.rstep, v.c0 : v.c0 + (v.w - 1) * v.cstep + 1 : v.cstep]


def fold(x: np.ndarray, k: int) -> np.ndarray:
    """The `fold` sub callable's result (the sub-worker computes exactly this)."""
    return (x * np.float32(3) + np.float32(k)) % np.float32(FOLD_MODULUS)


def result(op: Op, inputs: List[np.ndarray]) -> np.ndarray:
    """What simple op `op` writes to its output, given its inputs' values."""
    if op.kind in ("add", "sum"):
        return inputs[0] + inputs[1]
    if op.kind in ("add_scalar", "staged"):
        return inputs[0] + np.float32(op.param / 2)
    if op.kind == "copy":
        return inputs[0].copy()
    if op.kind == "fold":
        return fold(inputs[0], op.param)
    raise ValueError(f"model: unknown op {op.kind!r}")


def accesses(op: Op) -> List[Tuple[View, bool]]:
    """The views an op orders against others, each with whether it writes it (NO_DEP inputs order nothing)."""
    return [
        (v, i == len(m.views) - 1)
        for m in op.members or [op]
        for i, (v, t) in enumerate(zip(m.views, m.tags, strict=True))
        if t != "NO_DEP"
    ]


def conflicts(a: List[Tuple[View, bool]], b: List[Tuple[View, bool]]) -> bool:
    """Whether two sets of accesses are ordered by a dependency: a view both name, one writing it."""
    return any((wa or wb) and va.touches(vb) for va, wa in a for vb, wb in b)


class Outcome:
    """What evaluate() found: the expected bytes and which elements are
    unknown (written by an op that failed), per live buffer, and the problems."""

    def __init__(self) -> None:
        self.arrays: Dict[int, np.ndarray] = {}
        self.unknown: Dict[int, np.ndarray] = {}
        self.problems: List[str] = []


def evaluate(
    program: Program,
    log: List[tuple],
    status: Callable[[tuple], List[str]],
    touched: Callable[[tuple], bool],
    may_run_after: Callable[[tuple, tuple], bool],
) -> Outcome:
    """Replays `log` (("create", buf), ("release", buf), ("op", op, step, ...))
    with status(entry), the outcome of each task the op submitted ("ok",
    "failed" or "none": not run; a staged op's copy in, then its add_scalar
    out). touched(entry): whether the fault may have made that op fail or not
    run. may_run_after(missed, entry): whether the op of `entry` may run
    although the earlier op of `missed`, which it depends on, failed or did
    not run (across runs, once the earlier run's failure was reported); what
    it then read is what the buffer held, unknown where a failed op wrote."""
    out = Outcome()
    missed: List[tuple] = []  # (entry, what, the accesses that did not happen) of earlier ops
    for entry in log:
        if entry[0] == "create":
            out.arrays[entry[1]] = start_values(program, entry[1])
            out.unknown[entry[1]] = np.zeros(program.buffers[entry[1]], dtype=bool)
            continue
        if entry[0] == "release":
            del out.arrays[entry[1]], out.unknown[entry[1]]
            continue
        op, tasks = entry[1], status(entry)
        st = "failed" if "failed" in tasks else "ok" if all(t == "ok" for t in tasks) else "none"
        mine = accesses(op)
        blockers = [m for m in missed if conflicts(m[2], mine)]
        members = op.members or [op]
        if st == "ok":
            wrong = next((m for m in blockers if not may_run_after(m[0], entry)), None)
            if wrong is not None:
                out.problems.append(f"{op.text()} ran although {wrong[0][1].text()} before it {wrong[1]}")
            values = [result(m, [view_of(out.arrays[v.buf], v).copy() for v in m.views[:-1]]) for m in members]
            for m, value in zip(members, values, strict=True):
                unknown = any(
                    view_of(out.unknown[v.buf], v).any()
                    for v, t in zip(m.views[:-1], m.tags[:-1], strict=True)
                    if t != "NO_DEP"
                )
                view_of(out.arrays[m.views[-1].buf], m.views[-1])[...] = value
                view_of(out.unknown[m.views[-1].buf], m.views[-1])[...] = unknown
            continue
        what = "failed" if st == "failed" else "did not run"
        if not blockers and not touched(entry):
            out.problems.append(f"{op.text()} {what}, though the fault did not touch it nor anything it depends on")
        if st == "failed":
            for m in members:
                view_of(out.unknown[m.views[-1].buf], m.views[-1])[...] = True
        # A staged op whose copy in ran read its input: only its write of the output did not happen.
        missed.append((entry, what, [a for a in mine if a[1]] if op.kind == "staged" and tasks[0] == "ok" else mine))
    return out
