"""How a chaos program's ops become submits. On a level-3 tree the top Worker
submits them as they are (`Level3`); on a level-4 tree each op is a task of
the top Worker whose callable is an orchestration (`l3_ops`) that
submits the op in the level-3 child the op names, the op's description
travelling in the task's scalars (`encode`). A fault op submits its fault:
a sub callable that raises or sleeps past task_timeout, a chip task its
kernel refuses, a window named after its domain's release."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import List

import numpy as np

from model import fold
from program import Op
from simpler import ChipCallable, DataType, TaskArgs, TaskHandle, TaskKind, TensorArgType, Worker

F32 = DataType.FLOAT32
TAGS = {
    "IN": TensorArgType.INPUT,
    "NO_DEP": TensorArgType.NO_DEP,
    "OUTPUT": TensorArgType.OUTPUT,
    "OUTPUT_EXISTING": TensorArgType.OUTPUT_EXISTING,
    "INOUT": TensorArgType.INOUT,
}
KINDS = ["add", "add_scalar", "copy", "staged", "fold", "sum"]  # an op's code in a forwarded task's scalars
FAULT_CODES = ["", "task_raise", "chip_fail", "hang", "domain_again", "named_again"]
INJECTED = "chaos: injected failure"
NAP_S = 5.0  # a `hang` task's sleep: past any task_timeout a hang program sets


def sub_fold(a) -> None:
    a.array(1)[...] = fold(a.array(0), a.scalars[0])


def sub_sum(a) -> None:
    a.array(2)[...] = a.array(0) + a.array(1)


def sub_boom(a) -> None:
    raise RuntimeError(INJECTED)


def sub_nap(a) -> None:
    time.sleep(NAP_S)
    sub_fold(a)


def f32_bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def task_args(tensors, tags, scalars=()) -> TaskArgs:
    ta = TaskArgs()
    for t, tag in zip(tensors, tags, strict=True):
        ta.add_tensor(t, tag)
    for s in scalars:
        ta.add_scalar(s)
    return ta


class Level3:
    """How a level-3 Worker submits simple ops and groups: the callables,
    registered on the top Worker (a level-4 one hands them to its children)."""

    def __init__(self, w: Worker):
        self.chip = {
            k: w.register(ChipCallable(f"std.{n}"))
            for k, n in (("add", "vector_add"), ("add_scalar", "add_scalar"), ("copy", "copy"))
        }
        kind = TaskKind.SUB if w.level == 4 else None
        self.sub = {
            name: w.register(fn, kind=kind)
            for name, fn in (("fold", sub_fold), ("sum", sub_sum), ("task_raise", sub_boom), ("hang", sub_nap))
        }
        self.domains = 0
        _level3[:] = [self]

    def submit(self, o, kind: str, tensors, tags, param: int, chip: int, fault: str = "") -> List[TaskHandle]:
        """Submits one simple op; the handles of the tasks it submitted."""
        if kind == "staged":  # through a domain window on the chip: copy in, then add_scalar out of it
            h, w = tensors[0].shapes
            self.domains += 1
            name = f"stage{os.getpid()}.{self.domains}"
            with o.allocate_domain(name, workers=[chip], window_size=h * w * 4, buffers={"t": h * w * 4}) as dom:
                win = dom.buffer("t", chip).tensor((h, w), F32)
                first = o.submit_next_level(
                    self.chip["copy"], task_args([tensors[0], win], [tags[0], TensorArgType.OUTPUT]), worker=chip
                )
                if fault == "domain_again":
                    dom.release()  # the window is refused at submit from here on
                second = o.submit_next_level(
                    self.chip["add_scalar"],
                    task_args([win, tensors[1]], [TensorArgType.INPUT, tags[1]], (f32_bits(param / 2),)),
                    worker=chip,
                )
            return [first, second]
        if kind in self.chip and fault == "chip_fail":  # std.add_scalar without its scalar: the kernel refuses
            return [o.submit_next_level(self.chip["add_scalar"], task_args(tensors, tags), worker=chip)]
        if kind in self.chip:
            scalars = (f32_bits(param / 2),) if kind == "add_scalar" else ()
            return [o.submit_next_level(self.chip[kind], task_args(tensors, tags, scalars), worker=chip)]
        callable_ = self.sub[fault if fault in ("task_raise", "hang") else kind]
        return [o.submit_sub(callable_, task_args(tensors, tags, (param,)))]

    def submit_group(self, o, kind: str, members: List[tuple]) -> List[TaskHandle]:
        """members: (kind, tensors, tags, param, chip) each, one kind (a group runs one callable)."""
        if kind == "sub_group":
            return [o.submit_sub_group(self.sub[members[0][0]], [task_args(m[1], m[2], (m[3],)) for m in members])]
        k = members[0][0]
        scalars = [(f32_bits(m[3] / 2),) if k == "add_scalar" else () for m in members]
        return [
            o.submit_next_level_group(
                self.chip[k],
                [task_args(m[1], m[2], s) for m, s in zip(members, scalars, strict=True)],
                workers=[m[4] for m in members],
            )
        ]


def encode(ops: List[Op]) -> tuple:
    """Forwarded ops as scalars: [count, then per op: code, chip, param, tensor count, fault code]."""
    out = [len(ops)]
    for op in ops:
        out += [KINDS.index(op.kind), op.chip, op.param, len(op.views), FAULT_CODES.index(op.fault)]
    return tuple(out)


def arm_rank_fault(kind: str, delay: float) -> None:
    """In the rank a rank_kill or rank_stop fault names: the signal it sends
    itself, `delay` seconds after its first task began (l3_ops)."""
    _rank_fault.append((signal.SIGKILL if kind == "rank_kill" else signal.SIGSTOP, delay))


_rank_fault: List[tuple] = []
_level3: List[Level3] = []  # this process's Level3 (the handles every rank registered in the same order)


def l3_ops(o, a, _c) -> None:
    """In a level-3 child: the ops its parent's task forwarded (a group when
    the task carries more than one). Module-level, so a remote rank resolves it
    by its path."""
    if _rank_fault:
        sig, delay = _rank_fault.pop()
        threading.Timer(delay, os.kill, (os.getpid(), sig)).start()
    l3 = _level3[0]
    n, at, t = a.scalar(0), 1, 0
    members = []
    for _ in range(n):
        kind, chip, param, nt = KINDS[a.scalar(at)], a.scalar(at + 1), a.scalar(at + 2), a.scalar(at + 3)
        fault = FAULT_CODES[a.scalar(at + 4)]
        members.append((kind, [a[t + i] for i in range(nt)], [a.tag(t + i) for i in range(nt)], param, chip, fault))
        at, t = at + 5, t + nt
    if n == 1:
        l3.submit(o, *members[0])
    else:
        l3.submit_group(o, "sub_group" if members[0][0] in ("fold", "sum") else "chip_group", [m[:5] for m in members])
