"""One chaos run's Worker process (run by tests/py/chaos.py): builds a random
graph of chip tasks, sub tasks and groups over random, partly overlapping views
of three shared buffers, injects its fault, runs it and reports on stdout:

    children <pid> ...       after init()
    result ok <seconds>      every byte matches the NumPy reference
    result raised <seconds> <message on one line>
    result wrong <what>      a byte differs (a silent wrong answer)

    python chaos_parent.py SEED FAULT [tree]    FAULT: child_kill | task_raise | parent_kill

With `tree` the Worker is a level-4 one over two level-3 Workers (2 chips and
2 sub-workers each): every operation is an L4 task forwarded to a random L3
child, whose orchestration runs it on one of its chips or sub-workers (a chip
group spans the two children), and child_kill picks its victim among every
process of the tree.

child_kill: a thread SIGKILLs one random child at a random moment of the run.
task_raise: one random sub task raises. parent_kill: runs graphs until killed
(the driver SIGKILLs this process at a random moment: import, init, a run,
close)."""

import os
import random
import signal
import sys
import threading
import time

import numpy as np

from simpler import ChipCallable, DataType, TaskKind, TensorArgType, Worker, view_array
from worker_helpers import (
    args as _args,  # tests/py is this script's directory, first on sys.path
    descendants,
)

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
LEN = 256  # elements per buffer
SEG = 64  # elements per view
NUM_BUFFERS = 3


def triple(a):
    a.array(1)[...] = a.array(0) * 3


def slow_triple(a):
    time.sleep(0.002)
    a.array(1)[...] = a.array(0) * 3


def boom(a):
    raise RuntimeError("chaos: injected failure")


def f32_bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


class Graph:
    """A random program over the buffers and its NumPy reference."""

    def __init__(self, rng: random.Random, raise_at: int):
        self.rng = rng
        self.ops = []
        n = rng.randint(6, 14)
        for i in range(n):
            kind = rng.choice(["vadd", "add_scalar", "sub", "sub", "sub_group", "chip_group"])
            if i == raise_at:
                kind = "boom"
            self.ops.append((kind, self._views(kind)))

    def _seg(self):
        return (self.rng.randrange(NUM_BUFFERS), self.rng.randrange(0, LEN - SEG + 1, 32))

    def _disjoint(self, segs, s):
        return all(s[0] != t[0] or abs(s[1] - t[1]) >= SEG for t in segs)

    def _pick(self, taken):
        while True:
            s = self._seg()
            if self._disjoint(taken, s):
                return s

    def _views(self, kind):
        if kind == "vadd":
            a, b = self._seg(), self._seg()
            return [a, b, self._pick([a, b])]
        if kind in ("add_scalar", "sub", "boom"):
            a = self._seg()
            return [a, self._pick([a])]
        # a group: two members, each (input, output), outputs disjoint from everything else in the group
        a0, a1 = self._seg(), self._seg()
        o0 = self._pick([a0, a1])
        o1 = self._pick([a0, a1, o0])
        return [a0, o0, a1, o1]

    def reference(self, data):
        """Applies the program in submission order (what the runtime must produce)."""
        for kind, v in self.ops:
            get = [data[b][o:o + SEG].copy() for b, o in v]
            if kind == "vadd":
                out = [(v[2], get[0] + get[1])]
            elif kind == "add_scalar":
                out = [(v[1], get[0] + np.float32(1.5))]
            elif kind in ("sub", "boom"):
                out = [(v[1], get[0] * 3)]
            elif kind == "sub_group":
                out = [(v[1], get[0] * 3), (v[3], get[2] * 3)]
            else:  # chip_group: add_scalar on each member
                out = [(v[1], get[0] + np.float32(1.5)), (v[3], get[2] + np.float32(1.5))]
            for (b, o), val in out:
                data[b][o:o + SEG] = val


class Tree:
    """The tree shape: a level-4 Worker whose operations run in its L3 children.
    Each submit_* here takes the operation's views and runs it one level down."""

    def __init__(self, w: Worker, rng: random.Random):
        self.rng = rng
        vadd = w.register(ChipCallable("std.vector_add"))
        add_scalar = w.register(ChipCallable("std.add_scalar"))
        subs = [w.register(f, kind=TaskKind.SUB) for f in (triple, slow_triple, boom)]

        def l3_chip(o, a, _c):  # scalars: which callable (0 vadd, 1 add_scalar), chip, [the add_scalar operand]
            if a.scalar(0) == 0:
                o.submit_next_level(vadd, _args((a[0], IN), (a[1], IN), (a[2], OUT)), worker=a.scalar(1))
            else:
                o.submit_next_level(add_scalar, _args((a[0], IN), (a[1], OUT), scalars=(a.scalar(2),)),
                                    worker=a.scalar(1))

        def l3_sub(o, a, _c):  # scalar: which sub callable
            o.submit_sub(subs[a.scalar(0)], _args((a[0], IN), (a[1], OUT)))

        def l3_sub_group(o, a, _c):
            o.submit_sub_group(subs[0], [_args((a[0], IN), (a[1], OUT)), _args((a[2], IN), (a[3], OUT))])

        self.chip, self.sub, self.sub_group = w.register(l3_chip), w.register(l3_sub), w.register(l3_sub_group)

    def child(self) -> int:
        return self.rng.randrange(2)


def main() -> int:
    seed, fault = int(sys.argv[1]), sys.argv[2]
    tree = len(sys.argv) > 3 and sys.argv[3] == "tree"
    rng = random.Random(seed)
    if tree:
        w = Worker(level=4, task_timeout=20)
        for _ in range(2):
            w.add_worker(Worker(level=3, num_chips=2, num_sub_workers=2))
        shape = Tree(w, rng)
    else:
        w = Worker(level=3, num_chips=2, num_sub_workers=2, task_timeout=20)
        vadd = w.register(ChipCallable("std.vector_add"))
        add_scalar = w.register(ChipCallable("std.add_scalar"))
        tri = w.register(triple)
        slow = w.register(slow_triple)
        bad = w.register(boom)
    w.init()
    print("children", *w.child_pids(), flush=True)
    bufs = [w.create_buffer(LEN * 4) for _ in range(NUM_BUFFERS)]

    def view(seg):
        b, o = seg
        return bufs[b].tensor((SEG,), F32, byte_offset=o * 4)

    def one_graph(raise_at: int, on_start=None):
        graph = Graph(rng, raise_at)
        start = [rng.uniform(-10, 10) * np.ones(1, np.float32) + np.arange(LEN, dtype=np.float32)
                 for _ in range(NUM_BUFFERS)]
        for b, s in zip(bufs, start, strict=True):
            view_array(b.tensor((LEN,), F32))[...] = s

        def tree_orch(o, _a, _c):
            for kind, v in graph.ops:
                t = [view(s) for s in v]
                chip = rng.randrange(2)
                if kind == "vadd":
                    o.submit_next_level(shape.chip, _args((t[0], IN), (t[1], IN), (t[2], OUT), scalars=(0, chip)),
                                        worker=shape.child())
                elif kind == "add_scalar":
                    o.submit_next_level(shape.chip, _args((t[0], IN), (t[1], OUT), scalars=(1, chip, f32_bits(1.5))),
                                        worker=shape.child())
                elif kind in ("sub", "boom"):
                    which = 2 if kind == "boom" else rng.randrange(2)
                    o.submit_next_level(shape.sub, _args((t[0], IN), (t[1], OUT), scalars=(which,)),
                                        worker=shape.child())
                elif kind == "sub_group":
                    o.submit_next_level(shape.sub_group, _args((t[0], IN), (t[1], OUT), (t[2], IN), (t[3], OUT)),
                                        worker=shape.child())
                else:  # a chip group across the two L3 children
                    o.submit_next_level_group(shape.chip, [
                        _args((t[0], IN), (t[1], OUT), scalars=(1, rng.randrange(2), f32_bits(1.5))),
                        _args((t[2], IN), (t[3], OUT), scalars=(1, rng.randrange(2), f32_bits(1.5)))],
                        workers=[0, 1])

        def orch(o, _a, _c):
            if tree:
                tree_orch(o, _a, _c)
                return
            for kind, v in graph.ops:
                t = [view(s) for s in v]
                if kind == "vadd":
                    o.submit_next_level(vadd, _args((t[0], IN), (t[1], IN), (t[2], OUT)), worker=rng.randrange(2))
                elif kind == "add_scalar":
                    o.submit_next_level(add_scalar, _args((t[0], IN), (t[1], OUT), scalars=(f32_bits(1.5),)),
                                        worker=rng.randrange(2))
                elif kind == "sub":
                    o.submit_sub(rng.choice([tri, slow]), _args((t[0], IN), (t[1], OUT)))
                elif kind == "boom":
                    o.submit_sub(bad, _args((t[0], IN), (t[1], OUT)))
                elif kind == "sub_group":
                    o.submit_sub_group(tri, [_args((t[0], IN), (t[1], OUT)), _args((t[2], IN), (t[3], OUT))])
                else:
                    o.submit_next_level_group(add_scalar, [
                        _args((t[0], IN), (t[1], OUT), scalars=(f32_bits(1.5),)),
                        _args((t[2], IN), (t[3], OUT), scalars=(f32_bits(1.5),))], workers=[0, 1])

        if on_start:
            on_start()
        t0 = time.monotonic()
        try:
            w.run(orch)
        except Exception as e:  # noqa: BLE001 - the outcome is reported, not raised
            return "raised", time.monotonic() - t0, " ".join(f"{type(e).__name__}: {e}".split())
        elapsed = time.monotonic() - t0
        expect = [s.copy() for s in start]
        graph.reference(expect)
        for i, (b, e) in enumerate(zip(bufs, expect, strict=True)):
            got = view_array(b.tensor((LEN,), F32))
            if not np.array_equal(got, e):
                bad_at = int(np.flatnonzero(got != e)[0])
                return "wrong", elapsed, f"buffer {i} element {bad_at}: {got[bad_at]} != {e[bad_at]}"
        return "ok", elapsed, ""

    if fault == "parent_kill":
        until = time.monotonic() + 10  # the driver kills it well before
        while time.monotonic() < until:
            outcome, elapsed, msg = one_graph(-1)
            print("result", outcome, f"{elapsed:.4f}", msg, flush=True)
            if outcome != "ok":
                break
        w.close()
        return 0

    raise_at = rng.randrange(6) if fault == "task_raise" else -1
    on_start = None
    if fault == "child_kill":
        delay = rng.uniform(0, 0.01)
        pick = rng.random()

        def on_start():
            # in a tree, any process of it: an L3 child, or a chip or sub-worker below one
            pids = descendants(os.getpid()) if tree else w.child_pids()
            victim = pids[int(pick * len(pids))]
            threading.Timer(delay, os.kill, (victim, signal.SIGKILL)).start()

    outcome, elapsed, msg = one_graph(raise_at, on_start)
    print("result", outcome, f"{elapsed:.4f}", msg, flush=True)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
