"""One chaos run's Worker process (run by tests/py/chaos.py): builds a random
graph of chip tasks, sub tasks and groups over random, partly overlapping views
of three shared buffers, injects its fault, runs it and reports on stdout:

    children <pid> ...       after init()
    result ok <seconds>      every byte matches the NumPy reference
    result raised <seconds> <message on one line>
    result wrong <what>      a byte differs (a silent wrong answer)

    python chaos_parent.py SEED FAULT    FAULT: child_kill | task_raise | parent_kill

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

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from worker_helpers import args as _args  # tests/py is this script's directory, first on sys.path

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


def main() -> int:
    seed, fault = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(seed)
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

        def orch(o, _a, _c):
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
        victim = rng.choice(w.child_pids())
        delay = rng.uniform(0, 0.01)

        def on_start():
            threading.Timer(delay, os.kill, (victim, signal.SIGKILL)).start()

    outcome, elapsed, msg = one_graph(raise_at, on_start)
    print("result", outcome, f"{elapsed:.4f}", msg, flush=True)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
