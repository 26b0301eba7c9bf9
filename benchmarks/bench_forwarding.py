"""What forwarding costs a nested run: a task with 3 tensors through one hop (L4 -> L3 -> chip).

    .venv/bin/python benchmarks/bench_forwarding.py [--repeats 5] [--quick]

Prints a markdown table of medians:
  - the nested run's own forwarding work, in-process: forwarded_args (the parent's blob as this
    level's TaskArgs, each tensor validated and re-exported) and ForwardedScope.check (once per
    submit of the nested run), for a task of 3 tensors and 1 scalar;
  - round trip, one `w.run` per task: a level-3 Worker running `std.vector_add` on 3 forwarded-size
    tensors (zero-copy) on its chip — the baseline — against a level-4 Worker whose level-3 child's
    orchestration function submits the same chip task with the tensors it was forwarded.
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit

from simpler import CallConfig, ChipCallable, DataType, TaskArgs, TensorArgType, Worker, create_buffer
from simpler.abi import write_blob
from simpler.runtime.forwarded import forwarded_args

_CHIP: dict = {}  # the L4's chip handle, set before its init() forks the L3 child


def on_l3(o3, args, _cfg) -> None:
    """The L4's task, run as one run of its L3 child: the chip task on the forwarded tensors."""
    o3.submit_next_level(_CHIP["vadd"], args, worker=0)


def task_args(buffers) -> TaskArgs:
    ta = TaskArgs()
    for b, tag in zip(buffers, (TensorArgType.INPUT, TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING), strict=True):
        ta.add_tensor(b.tensor((16,), DataType.FLOAT32), tag)
    return ta


def forwarding_work(n: int) -> tuple[float, float]:
    with create_buffer(4096) as b:
        ta = TaskArgs()
        for k, tag in enumerate((TensorArgType.INPUT, TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING)):
            ta.add_tensor(b.tensor((16,), DataType.FLOAT32, byte_offset=64 * k), tag)
        ta.add_scalar(5)
        blob = write_blob(ta)
        config = bytearray(64)
        config[32] |= 1 << 2  # the parent's task writes tensor 2
        cfg = CallConfig.from_bytes(bytes(config))
        args, scope = forwarded_args(blob, cfg)
        fwd = timeit.timeit(lambda: forwarded_args(blob, cfg), number=n) / n
        check = timeit.timeit(lambda: scope.check(args, "submit"), number=n) / n
    return fwd * 1e6, check * 1e6


def round_trip(w: Worker, orch, n: int) -> float:
    for _ in range(min(200, n)):
        w.run(orch)
    times = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        w.run(orch)
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def l3_round_trip(n: int) -> float:
    with Worker(level=3, num_chips=1, zero_copy=True) as w:
        vadd = w.register(ChipCallable("std.vector_add"))
        w.init()
        ta = task_args([w.create_buffer(64) for _ in range(3)])
        return round_trip(w, lambda o, _a, _c: o.submit_next_level(vadd, ta, worker=0), n)


def tree_round_trip(n: int) -> float:
    with Worker(level=4) as w4:
        w4.add_worker(Worker(level=3, num_chips=1, zero_copy=True))
        _CHIP["vadd"] = w4.register(ChipCallable("std.vector_add"))
        hop = w4.register(on_l3)
        w4.init()
        ta = task_args([w4.create_buffer(64) for _ in range(3)])
        return round_trip(w4, lambda o, _a, _c: o.submit_next_level(hop, ta, worker=0), n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer calls per run (a smoke run)")
    opts = ap.parse_args(argv)
    calls, runs = (200, 100) if opts.quick else (20000, 2000)
    rows: dict[str, list[float]] = {"forwarded_args": [], "check": [], "L3": [], "L4 -> L3": []}
    for _ in range(opts.repeats):
        fwd, check = forwarding_work(calls)
        rows["forwarded_args"].append(fwd)
        rows["check"].append(check)
        rows["L3"].append(l3_round_trip(runs))
        rows["L4 -> L3"].append(tree_round_trip(runs))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"Forwarding a task of 3 tensors; medians of {opts.repeats}\n")
    print("| row | median |\n|---|---|")
    print(f"| forwarded_args, per nested task | {med['forwarded_args']:.2f} µs |")
    print(f"| ForwardedScope.check, per submit | {med['check']:.2f} µs |")
    print(f"| round trip, L3 -> chip (baseline) | {med['L3']:.1f} µs |")
    print(f"| round trip, L4 -> L3 -> chip | {med['L4 -> L3']:.1f} µs |")
    print(f"| the hop (difference) | {med['L4 -> L3'] - med['L3']:.1f} µs |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
