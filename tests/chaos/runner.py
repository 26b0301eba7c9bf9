"""One chaos program's Worker process (started by driver.py, one per program):
builds the program's tree of Workers, does its steps, checks the bytes against
the model at every sync and at the end, closes, and reports on stdout, one JSON
object per line:

    {"children": [pid, ...]}                       after init()
    {"check": STEP, "buffers": N}                  a sync's check passed
    {"wrong": "..."}                               a byte differs from the model (a silent wrong answer)
    {"error": "..."}                               a run raised (no fault was injected)
    {"done": TASKS, "seconds": S, "threads_left": N}

    python tests/chaos/runner.py SEED

On a level-3 tree the program's ops are submitted as they are; on a level-4
tree each op is a task of the level-4 Worker that runs, in the level-3 child
the op names, an orchestration submitting the op there (`l3_ops`)."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Dict, List

import numpy as np

from model import Model, fold
from program import Op, Program, generate
from simpler import ChipCallable, DataType, TaskArgs, TaskKind, TensorArgType, Worker, view_array

F32 = DataType.FLOAT32
TAGS = {"IN": TensorArgType.INPUT, "NO_DEP": TensorArgType.NO_DEP, "OUTPUT": TensorArgType.OUTPUT,
        "OUTPUT_EXISTING": TensorArgType.OUTPUT_EXISTING, "INOUT": TensorArgType.INOUT}
KINDS = ["add", "add_scalar", "copy", "staged", "fold", "sum"]  # an op's code in a forwarded task's scalars
TASK_TIMEOUT_S = 20.0


def sub_fold(a) -> None:
    a.array(1)[...] = fold(a.array(0), a.scalars[0])


def sub_sum(a) -> None:
    a.array(2)[...] = a.array(0) + a.array(1)


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
    """How a level-3 Worker submits simple ops: its callables (registered on
    the top Worker, which a level-4 one hands to its children)."""

    def __init__(self, w: Worker):
        self.chip = {k: w.register(ChipCallable(f"std.{n}")) for k, n in
                     (("add", "vector_add"), ("add_scalar", "add_scalar"), ("copy", "copy"))}
        kind = TaskKind.SUB if w.level == 4 else None
        self.sub = {"fold": w.register(sub_fold, kind=kind), "sum": w.register(sub_sum, kind=kind)}
        self.domains = 0

    def submit(self, o, kind: str, tensors, tags, param: int, chip: int) -> None:
        if kind == "staged":  # through a domain window on the chip: copy in, then add_scalar out of it
            h, w = tensors[0].shapes
            self.domains += 1
            name = f"stage{os.getpid()}.{self.domains}"
            with o.allocate_domain(name, workers=[chip], window_size=h * w * 4, buffers={"t": h * w * 4}) as dom:
                win = dom.buffer("t", chip).tensor((h, w), F32)
                o.submit_next_level(self.chip["copy"], task_args([tensors[0], win], [tags[0], TensorArgType.OUTPUT]),
                                    worker=chip)
                o.submit_next_level(self.chip["add_scalar"], task_args([win, tensors[1]], [TensorArgType.INPUT,
                                    tags[1]], (f32_bits(param / 2),)), worker=chip)
        elif kind in self.chip:
            scalars = (f32_bits(param / 2),) if kind == "add_scalar" else ()
            o.submit_next_level(self.chip[kind], task_args(tensors, tags, scalars), worker=chip)
        else:
            o.submit_sub(self.sub[kind], task_args(tensors, tags, (param,)))

    def submit_group(self, o, kind: str, members: List[tuple]) -> None:
        """members: (kind, tensors, tags, param, chip) each, one kind (a group runs one callable)."""
        if kind == "sub_group":
            o.submit_sub_group(self.sub[members[0][0]], [task_args(m[1], m[2], (m[3],)) for m in members])
            return
        k = members[0][0]
        scalars = [(f32_bits(m[3] / 2),) if k == "add_scalar" else () for m in members]
        o.submit_next_level_group(self.chip[k], [task_args(m[1], m[2], s)
                                                 for m, s in zip(members, scalars, strict=True)],
                                  workers=[m[4] for m in members])


def encode(ops: List[Op]) -> tuple:
    """Forwarded ops as scalars: [count, then per op: code, chip, param, tensor count]."""
    out = [len(ops)]
    for op in ops:
        out += [KINDS.index(op.kind), op.chip, op.param, len(op.views)]
    return tuple(out)


def make_l3_ops(l3: Level3):
    def l3_ops(o, a, _c) -> None:
        """In a level-3 child: the ops its parent's task forwarded (a group
        when the task carries more than one)."""
        n, at, t = a.scalar(0), 1, 0
        members = []
        for _ in range(n):
            kind, chip, param, nt = KINDS[a.scalar(at)], a.scalar(at + 1), a.scalar(at + 2), a.scalar(at + 3)
            members.append((kind, [a[t + i] for i in range(nt)], [a.tag(t + i) for i in range(nt)], param, chip))
            at, t = at + 4, t + nt
        if n == 1:
            l3.submit(o, *members[0])
        else:
            l3.submit_group(o, "sub_group" if members[0][0] in ("fold", "sum") else "chip_group", members)

    return l3_ops


def build(program: Program) -> Worker:
    tree = program.tree
    if tree.level == 3:
        chips, subs = tree.l3s[0]
        return Worker(level=3, num_chips=chips, num_sub_workers=subs, task_timeout=TASK_TIMEOUT_S)
    w = Worker(level=4, task_timeout=TASK_TIMEOUT_S)
    for chips, subs in tree.l3s:
        w.add_worker(Worker(level=3, num_chips=chips, num_sub_workers=subs))
    return w


def first_difference(got: np.ndarray, want: np.ndarray) -> str:
    bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))
    if not len(bad):
        return ""
    r, c = (int(x) for x in bad[0])
    return f"element ({r}, {c}): {got[r, c]} != {want[r, c]} ({len(bad)} elements differ)"


def main() -> int:
    seed = int(sys.argv[1])
    program = generate(seed)
    threads_before = len(os.listdir("/proc/self/task"))
    t0 = time.monotonic()
    w = build(program)
    l3 = Level3(w)
    l3_ops = w.register(make_l3_ops(l3)) if program.tree.level == 4 else None
    w.init()
    print(json.dumps({"children": w.child_pids()}), flush=True)
    model = Model(program)
    bufs: Dict[int, object] = {}
    pending_releases: List[int] = []

    def create(b: int) -> None:
        rows, cols = program.buffers[b]
        bufs[b] = w.create_buffer(rows * cols * 4)
        view_array(bufs[b].tensor((rows, cols), F32))[...] = model.create(b)

    def tensor(v):
        return bufs[v.buf].tensor((v.h, v.w), F32, strides=v.strides(), byte_offset=v.offset() * 4)

    def check(step: int) -> bool:
        for b, want in model.arrays.items():
            got = view_array(bufs[b].tensor(want.shape, F32))
            diff = first_difference(got, want)
            if diff:
                print(json.dumps({"wrong": f"step {step}: buffer {b} {diff}"}), flush=True)
                return False
        print(json.dumps({"check": step, "buffers": len(model.arrays)}), flush=True)
        return True

    def orchestration(ops: List[Op]):
        # The views are made now: a future's orchestration runs later, maybe after a release of their buffer.
        made = [[(m, [tensor(v) for v in m.views], [TAGS[t] for t in m.tags]) for m in op.members or [op]]
                for op in ops]

        releases = [bufs.pop(b) for b in pending_releases]
        pending_releases.clear()

        def orch(o, _a, _c) -> None:
            # Runs are built in the order they were asked for: every task of the runs before this one has been
            # submitted, and may still be queued or running, when the buffers released here are released.
            for b in releases:
                w.release_buffer(b)
            for op, members in zip(ops, made, strict=True):
                if l3_ops is None and op.members:
                    l3.submit_group(o, op.kind, [(m.kind, ts, tags, m.param, m.chip) for m, ts, tags in members])
                elif l3_ops is None:
                    l3.submit(o, op.kind, members[0][1], members[0][2], op.param, op.chip)
                elif op.kind == "chip_group" and len(program.tree.l3s) == 2:  # one member on each level-3 child
                    o.submit_next_level_group(l3_ops, [task_args(ts, tags, encode([m])) for m, ts, tags in members],
                                              workers=[0, 1])
                else:
                    o.submit_next_level(l3_ops, task_args([t for _, ts, _ in members for t in ts],
                                                          [t for _, _, tags in members for t in tags],
                                                          encode([m for m, _, _ in members])), worker=op.child)

        return orch

    futures = []
    ok = True
    try:
        for b in range(len(program.buffers)):
            if not any(s.what == "create" and s.buf == b for s in program.steps):
                create(b)
        for i, step in enumerate(program.steps):
            if step.what == "run":
                for op in step.ops:
                    model.apply(op)
                if step.future:
                    futures.append(w.submit(orchestration(step.ops)))
                else:
                    w.run(orchestration(step.ops))
            elif step.what == "sync":
                for f in futures:
                    f.result()
                futures.clear()
                ok = ok and check(i)
            elif step.what == "release" and step.checked:  # after a sync
                w.release_buffer(bufs.pop(step.buf))
                model.release(step.buf)
            elif step.what == "release":  # by the next run's orchestration, when the runs before it are built
                pending_releases.append(step.buf)
                model.release(step.buf)
            else:
                create(step.buf)
        for f in futures:
            f.result()
        for b in pending_releases:
            w.release_buffer(bufs.pop(b))
        ok = check(len(program.steps)) and ok
    except Exception as e:  # noqa: BLE001 - reported, not raised: no fault was injected
        print(json.dumps({"error": " ".join(f"{type(e).__name__}: {e}".split()),
                          "traceback": traceback.format_exc()[-3000:]}), flush=True)
        ok = False
    w.close()
    left = len(os.listdir("/proc/self/task")) - threads_before
    print(json.dumps({"done": program.task_count(), "seconds": round(time.monotonic() - t0, 3),
                      "threads_left": left}), flush=True)
    return 0 if ok and left <= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
