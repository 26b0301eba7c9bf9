"""The runtime end to end from Python: what `Worker.run()` costs per task.

    .venv/bin/python benchmarks/bench_worker.py [--repeats 5] [--quick]

Prints a markdown table. Every row is the median of `--repeats` runs; a round
trip row is, per run, the mean over many one-task `w.run(...)` calls, a
throughput row one `w.run(...)` whose orchestration function submits N tasks.
Rows:
  - baselines, measured in the same run: a `multiprocessing.Pipe` round trip to
    a forked child, and passing one shared torch tensor to a
    `torch.multiprocessing` child and back (when torch is installed);
  - empty-task round trip, one task per `w.run`, to a sub-worker (a Python
    callable) and to a chip (`ChipCallable("std.noop")`), hot (`spin=1e-3`:
    every waiter spins up to 1 ms) and cold (`spin=0`: every hand-off sleeps);
  - independent empty tasks from one orchestration function across 2 chips
    (target >= 50,000 tasks/s) and across 2 sub-workers;
  - a chain, where each task depends on the one before: on a chip, N
    `std.copy` tasks of 16 floats alternating x -> y and y -> x (`std.noop`
    takes no tensors); on a sub-worker, N empty tasks INOUT on one view.
A chip row prints "n/a (chips not wired)" while this build has no ChipCallable.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time

from simpler import DataType, TaskArgs, TensorArgType, Worker

HOT = 1e-3
COLD = 0.0


class ChipsNotWired(Exception):
    pass


def chip_callable(name="std.noop"):
    try:
        from simpler import ChipCallable
    except ImportError as e:
        raise ChipsNotWired from e
    return ChipCallable(name)


def noop(_args):
    return None


def median_runs(run, repeats):
    return statistics.median(run() for _ in range(repeats))


# -- baselines ------------------------------------------------------------------
def _echo(conn):
    while True:
        m = conn.recv()
        if m is None:
            return
        conn.send(m)


def pipe_round_trip_us(k, repeats):
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_echo, args=(child,))
    p.start()
    try:
        for _ in range(100):
            parent.send(1)
            parent.recv()

        def run():
            t0 = time.perf_counter()
            for _ in range(k):
                parent.send(1)
                parent.recv()
            return (time.perf_counter() - t0) / k * 1e6

        return median_runs(run, repeats)
    finally:
        parent.send(None)
        p.join(10)


def _torch_echo(q_in, q_out):
    while True:
        t = q_in.get()
        if t is None:
            return
        q_out.put(t)


def torch_tensor_round_trip_us(k, repeats):
    try:
        import torch
        import torch.multiprocessing as tmp
    except ImportError:
        return None
    ctx = tmp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_torch_echo, args=(q_in, q_out))
    p.start()
    try:
        t = torch.zeros(16).share_memory_()
        for _ in range(10):
            q_in.put(t)
            q_out.get()

        def run():
            t0 = time.perf_counter()
            for _ in range(k):
                q_in.put(t)
                q_out.get()
            return (time.perf_counter() - t0) / k * 1e6

        return median_runs(run, repeats)
    finally:
        q_in.put(None)
        p.join(10)


# -- the runtime ----------------------------------------------------------------
def round_trip_us(target, spin, k, repeats):
    """Mean µs per one-task w.run(), median over repeats."""
    if target == "chip":
        callable_ = chip_callable()
        w = Worker(level=3, num_chips=1, spin=spin)
    else:
        callable_ = noop
        w = Worker(level=3, num_sub_workers=1, spin=spin)
    with w:
        h = w.register(callable_)
        w.init()
        empty = TaskArgs()
        if target == "chip":

            def orch(o, _a, _c):
                o.submit_next_level(h, empty, None, worker=0)
        else:

            def orch(o, _a, _c):
                o.submit_sub(h, empty)

        return run_round_trip_us(w, orch, k, repeats)


def run_round_trip_us(w, orch, k, repeats):
    """Median over repeats of the mean time of k one-task w.run(orch) calls (µs), after 100 warm-up runs."""
    for _ in range(100):
        w.run(orch)

    def run():
        t0 = time.perf_counter()
        for _ in range(k):
            w.run(orch)
        return (time.perf_counter() - t0) / k * 1e6

    return median_runs(run, repeats)


def throughput(target, shape, n, repeats, spin=None):
    """Tasks per second of one w.run() submitting n tasks, median over repeats."""
    if target == "chip":
        callable_ = chip_callable("std.copy" if shape == "chain" else "std.noop")
        w = Worker(level=3, num_chips=2, spin=spin)
    else:
        callable_ = noop
        w = Worker(level=3, num_sub_workers=2, spin=spin)
    with w:
        h = w.register(callable_)
        w.init()
        buf = w.create_buffer(128)
        x, y = buf.tensor((16,), DataType.FLOAT32), buf.tensor((16,), DataType.FLOAT32, byte_offset=64)
        args = TaskArgs()
        if shape == "chain" and target == "sub":
            args.add_tensor(x, TensorArgType.INOUT)
        if target == "chip" and shape == "chain":
            # std.copy x -> y, then y -> x, ...: each task reads what the one before wrote.
            there, back = TaskArgs(), TaskArgs()
            there.add_tensor(x, TensorArgType.INPUT)
            there.add_tensor(y, TensorArgType.OUTPUT_EXISTING)
            back.add_tensor(y, TensorArgType.INPUT)
            back.add_tensor(x, TensorArgType.OUTPUT_EXISTING)
            pair = (there, back)

            def orch(o, _a, _c):
                for i in range(n):
                    o.submit_next_level(h, pair[i & 1], None, worker=0)
        elif target == "chip":

            def orch(o, _a, _c):
                for i in range(n):
                    o.submit_next_level(h, args, None, worker=i & 1)
        else:

            def orch(o, _a, _c):
                for _ in range(n):
                    o.submit_sub(h, args)

        return tasks_per_second(w, orch, n, repeats)


def tasks_per_second(w, orch, n, repeats):
    """Median over repeats of n / the time of one w.run(orch) (orch submits n tasks), after a warm-up run."""
    w.run(orch)  # warm-up

    def run():
        t0 = time.perf_counter()
        w.run(orch)
        return n / (time.perf_counter() - t0)

    return median_runs(run, repeats)


def fmt_us(v):
    return "n/a" if v is None else f"{v:,.1f} µs"


def fmt_rate(v):
    return f"{v:,.0f} tasks/s ({1e6 / v:.1f} µs/task)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer calls per run (a smoke run)")
    a = ap.parse_args(argv)
    k = 200 if a.quick else 2000
    n = 2000 if a.quick else 20000
    rows = []

    def row(name, fn, fmt):
        try:
            value = fmt(fn())
        except ChipsNotWired:
            value = "n/a (chips not wired)"
        rows.append((name, value))
        print(f"  {name}: {value}", file=sys.stderr, flush=True)

    row("baseline: multiprocessing.Pipe round trip", lambda: pipe_round_trip_us(k, a.repeats), fmt_us)
    row(
        "baseline: torch.multiprocessing shared tensor, to a child and back",
        lambda: torch_tensor_round_trip_us(max(k // 10, 20), a.repeats),
        fmt_us,
    )
    for target in ("sub", "chip"):
        who = "a sub-worker" if target == "sub" else "a chip"
        for regime, spin in (("hot", HOT), ("cold", COLD), ("adaptive", None)):
            row(
                f"round trip, one empty task to {who}, {regime}",
                lambda target=target, spin=spin: round_trip_us(target, spin, k, a.repeats),
                fmt_us,
            )
    for target, who in (("chip", "2 chips"), ("sub", "2 sub-workers")):
        for regime, spin in (("hot", HOT), ("adaptive", None)):
            row(
                f"{n:,} independent empty tasks across {who}, {regime}",
                lambda target=target, spin=spin: throughput(target, "independent", n, a.repeats, spin),
                fmt_rate,
            )
    row(
        f"chain of {n:,} std.copy tasks (16 floats, x -> y -> x ...) on a chip, adaptive",
        lambda: throughput("chip", "chain", n, a.repeats),
        fmt_rate,
    )
    row(
        f"chain of {n:,} empty tasks (INOUT on one view) on a sub-worker, adaptive",
        lambda: throughput("sub", "chain", n, a.repeats),
        fmt_rate,
    )

    load = os.getloadavg()
    print(
        f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of {a.repeats} runs; "
        f"round trips: mean of {k:,} w.run() calls per run; throughput: one w.run() of {n:,} tasks per run\n"
    )
    print("| benchmark | median |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
