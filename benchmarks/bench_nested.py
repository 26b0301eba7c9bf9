"""Nested Workers from Python: what one forwarding hop (L4 -> L3 -> chip) costs.

    .venv/bin/python benchmarks/bench_nested.py [--repeats 5] [--quick]

Prints a markdown table. Every row is the median of `--repeats` runs, and each
nested row has its same-run baseline without the hop:
  - round trip, one empty chip task (`ChipCallable("std.noop")`) per `w.run`:
    L3 -> chip (a level-3 Worker, 1 chip) against L4 -> L3 -> chip (a level-4
    Worker with one level-3 child of 1 chip, whose orchestration function
    submits the chip task), hot (`spin=1e-3`) and adaptive (the default);
  - throughput, one `w.run` whose orchestration submits N independent tasks:
    L3 submitting N empty chip tasks over 2 chips, against L4 submitting N tasks
    over 2 level-3 children (2 chips each), each L3 orchestration submitting one
    empty chip task (goal: >= 20,000 L4 tasks/s).

SIMPLER_BENCH_PROFILE=DIR writes a cProfile of each L3 child's task server (one
`DIR/l3-<pid>.prof` per child, read with `python -m pstats`) for the L4
throughput row.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys

import simpler.worker
from bench_worker import (  # benchmarks/, first on sys.path
    fmt_rate,
    fmt_us,
    run_round_trip_us,
    tasks_per_second,
)
from simpler import ChipCallable, TaskArgs, Worker

HOT = 1e-3


def chip_task(o, a, cfg):
    """The L3 orchestration every L4 task runs: one empty chip task, on chip 0 (an
    L3 child runs one L4 task at a time, so a second chip would add nothing)."""
    o.submit_next_level(_NOOP, a, worker=0)


_NOOP = None  # the std.noop handle, set once per tree before init()


def l3_worker(chips, spin):
    w = Worker(level=3, num_chips=chips, spin=spin)
    h = w.register(ChipCallable("std.noop"))
    return w, h


def l4_worker(children, chips, spin):
    global _NOOP
    w = Worker(level=4, spin=spin)
    for _ in range(children):
        w.add_worker(Worker(level=3, num_chips=chips, spin=spin))
    _NOOP = w.register(ChipCallable("std.noop"))
    h = w.register(chip_task)
    return w, h


def profile_children(where):
    """Wraps every next-level child's task server (forked from here on) in a
    cProfile that the child writes to `where` when its Worker closes."""
    start = simpler.worker.start_child

    def profiled_start(child):
        dispatch, close, forget = start(child)
        prof = cProfile.Profile()

        def run(callable_id, blob, config):
            return prof.runcall(dispatch, callable_id, blob, config)

        def done():
            prof.dump_stats(os.path.join(where, f"l3-{os.getpid()}.prof"))
            close()

        return run, done, forget

    simpler.worker.start_child = profiled_start


def round_trip_us(nested, spin, k, repeats):
    """Mean µs per one-task w.run(), median over repeats."""
    w, h = l4_worker(1, 1, spin) if nested else l3_worker(1, spin)
    with w:
        w.init()
        empty = TaskArgs()

        def orch(o, _a, _c):
            o.submit_next_level(h, empty, worker=0)

        return run_round_trip_us(w, orch, k, repeats)


def throughput(nested, n, repeats, spin=None):
    """Tasks per second of one w.run() submitting n independent tasks over 2 children, median over repeats."""
    w, h = l4_worker(2, 2, spin) if nested else l3_worker(2, spin)
    with w:
        w.init()
        empty = TaskArgs()

        def orch(o, _a, _c):
            for i in range(n):
                o.submit_next_level(h, empty, worker=i & 1)

        return tasks_per_second(w, orch, n, repeats)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer calls per run (a smoke run)")
    a = ap.parse_args(argv)
    profile_dir = os.environ.get("SIMPLER_BENCH_PROFILE")
    k = 200 if a.quick else 2000
    n = 2000 if a.quick else 20000
    rows = []

    def row(name, fn, fmt):
        value = fn()
        rows.append((name, value, fmt))
        print(f"  {name}: {fmt(value)}", file=sys.stderr, flush=True)
        return value

    for regime, spin in (("hot", HOT), ("adaptive", None)):
        base = row(
            f"round trip, one empty chip task, L3 -> chip, {regime}",
            lambda spin=spin: round_trip_us(False, spin, k, a.repeats),
            fmt_us,
        )
        hop = row(
            f"round trip, one empty chip task, L4 -> L3 -> chip, {regime}",
            lambda spin=spin: round_trip_us(True, spin, k, a.repeats),
            fmt_us,
        )
        rows.append((f"added by the hop, {regime}", hop - base, fmt_us))
    row(
        f"{n:,} independent empty chip tasks, L3 over 2 chips, adaptive",
        lambda: throughput(False, n, a.repeats),
        fmt_rate,
    )
    if profile_dir:
        profile_children(profile_dir)
    row(
        f"{n:,} independent L4 tasks over 2 L3 children (2 chips each), one chip task each, adaptive",
        lambda: throughput(True, n, a.repeats),
        fmt_rate,
    )

    load = os.getloadavg()
    print(
        f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of {a.repeats} runs; "
        f"round trips: mean of {k:,} w.run() calls per run; throughput: one w.run() of {n:,} tasks per run\n"
    )
    print("| benchmark | median |")
    print("|---|---|")
    for name, value, fmt in rows:
        print(f"| {name} | {fmt(value)} |")


if __name__ == "__main__":
    main()
