"""A run's timeline, opened in Perfetto.

Builds a small pipeline — a tiled matmul on two chips, then per-row-block sums
on two sub-workers that wait for exactly the tiles they read — records it with
`Worker(trace=True)` and writes the timeline as a Chrome trace:

    python examples/trace_perfetto.py --out run.json

Open run.json in https://ui.perfetto.dev (Open trace file) or chrome://tracing:
one process for the Worker, one track per lane (`submit`, `chip 0`, `chip 1`,
`sub-worker 0`, ...); each slice is one task on one child, and the `queued task N`
slices show how long each task waited for its inputs or for a free child.
"""

import argparse
import json
import os
import tempfile

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker
from simpler.runtime.trace import intervals

F32 = DataType.FLOAT32
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def row_sums(args):
    args.array(1)[:] = args.array(0).sum(axis=1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=None, help="where to write the trace (default: a temporary file, removed)")
    p.add_argument("--size", type=int, default=128, help="matrix side (a multiple of 4)")
    opts = p.parse_args(argv)
    n = opts.size
    if n % 4:
        p.error("--size must be a multiple of 4")
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    out = opts.out or os.path.join(tempfile.mkdtemp(prefix="simpler-trace-"), "run.json")

    with Worker(level=3, num_chips=2, num_sub_workers=2, trace=True) as w:
        mm, sums = w.register(ChipCallable("std.matmul")), w.register(row_sums)
        w.init()
        a, b, c, s = (w.create_buffer(nb) for nb in (n * n * 4, n * n * 4, n * n * 4, n * 4))
        a.array((n, n), F32)[...] = A
        b.array((n, n), F32)[...] = B
        half = n // 2

        def orch(o, _a, _c):
            for chip in (0, 1):  # C's top and bottom halves, one chip each
                ta = TaskArgs()
                ta.add_tensor(a.tensor((half, n), F32, None, chip * half * n * 4), IN)
                ta.add_tensor(b.tensor((n, n), F32), IN)
                ta.add_tensor(c.tensor((half, n), F32, None, chip * half * n * 4), OUT)
                o.submit_next_level(mm, ta, worker=chip)
            for q in range(4):  # each quarter of the rows waits for the one matmul that writes it
                rows = n // 4
                ta = TaskArgs()
                ta.add_tensor(c.tensor((rows, n), F32, None, q * rows * n * 4), IN)
                ta.add_tensor(s.tensor((rows,), F32, None, q * rows * 4), OUT)
                o.submit_sub(sums, ta)

        w.run(orch)
        w.write_trace(out)
        ran = intervals(w.trace_events())
        got = s.array((n,), F32).copy()

    with open(out) as f:
        trace = json.load(f)
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    ok = bool(np.allclose(got, (A @ B).sum(axis=1), rtol=1e-3, atol=1e-2))
    print(f"{len(ran)} tasks on lanes {', '.join(sorted({i.lane for i in ran}))}; row sums match NumPy: {ok}")
    print(f"trace: {len(trace['traceEvents'])} events ({len(slices)} slices) written to {out}")
    print("open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing")
    if not opts.out:
        os.remove(out)
        os.rmdir(os.path.dirname(out))
    return 0 if ok and len(ran) == 6 and len(slices) == 6 else 1


if __name__ == "__main__":
    raise SystemExit(main())
