"""The model a chaos program is checked against: its tasks applied in NumPy,
one at a time in submission order (a valid serial order: the runtime may run
tasks concurrently only where no dependency orders them, so every byte must
come out as here). The runtime's own kernels compute the same float32
operations elementwise, so the bytes must match exactly."""

from __future__ import annotations

from typing import Dict, List

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
        return arr[v.r0:v.r0 + (v.w - 1) * v.rstep + 1:v.rstep, v.c0:v.c0 + (v.h - 1) * v.cstep + 1:v.cstep].T
    return arr[v.r0:v.r0 + (v.h - 1) * v.rstep + 1:v.rstep, v.c0:v.c0 + (v.w - 1) * v.cstep + 1:v.cstep]


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


class Model:
    """The buffers' expected bytes as the program's tasks are applied."""

    def __init__(self, program: Program):
        self.program = program
        self.arrays: Dict[int, np.ndarray] = {}

    def create(self, buf: int) -> np.ndarray:
        self.arrays[buf] = start_values(self.program, buf)
        return self.arrays[buf]

    def release(self, buf: int) -> None:
        del self.arrays[buf]

    def apply(self, op: Op) -> None:
        # A group's members touch disjoint elements: reading every input first is the members' concurrency.
        members = op.members or [op]
        outs = [result(m, [view_of(self.arrays[v.buf], v).copy() for v in m.views[:-1]]) for m in members]
        for m, value in zip(members, outs, strict=True):
            view_of(self.arrays[m.views[-1].buf], m.views[-1])[...] = value
