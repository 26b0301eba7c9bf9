"""Both kinds of children present: does one kind's traffic slow the other? (issue 33, item 1)

    .venv/bin/python benchmarks/bench_mixed.py [--tasks 20000] [--repeats 5]

Every row is one `w.run(...)` whose orchestration function submits N empty
tasks, the median of `--repeats` runs after one warm-up run. Every Worker is
alive through the whole measurement and each repetition runs every row once in
turn, so each row has its single-kind baseline measured beside it:
  - sub-worker tasks (`submit_sub` of a Python no-op) on
    `Worker(num_sub_workers=1)`, then with an idle chip added (`num_chips=1`);
  - chip tasks (`std.noop`) on `Worker(num_chips=1)`, then with an idle
    sub-worker added (`num_sub_workers=1`);
  - a mixed stream on `Worker(num_chips=1, num_sub_workers=1)`: N tasks
    alternating sub-worker and chip. Its baseline is the time the two halves
    take alone on the single-kind Workers above (N/2 at each single-kind rate,
    one after the other); the ratio is that time over the mixed stream's.
The goal: each kind with the other present >= 90 % of its single-kind
throughput. The load average is printed with the table.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

from bench_worker import chip_callable, noop
from simpler import TaskArgs, Worker


def program(w: Worker, kinds: str, n: int):
    """The orchestration function of one run: n empty tasks of `kinds` ("sub", "chip" or "mixed")."""
    sub = w.register(noop) if kinds != "chip" else None
    chip = w.register(chip_callable("std.noop")) if kinds != "sub" else None
    args = TaskArgs()
    if kinds == "sub":

        def orch(o, _a, _c):
            for _ in range(n):
                o.submit_sub(sub, args)
    elif kinds == "chip":

        def orch(o, _a, _c):
            for _ in range(n):
                o.submit_next_level(chip, args)
    else:

        def orch(o, _a, _c):
            for _ in range(n // 2):
                o.submit_sub(sub, args)
                o.submit_next_level(chip, args)

    return orch


def rates(specs, n: int, repeats: int):
    """Median tasks/s of each (kinds, chips, subs) in `specs`. Every Worker is made
    and warmed up first, then each repetition times one run of each in turn, so
    a change in the machine's load falls on every row alike."""
    with contextlib.ExitStack() as stack:
        runs = []
        for kinds, chips, subs in specs:
            w = stack.enter_context(Worker(level=3, num_chips=chips, num_sub_workers=subs))
            orch = program(w, kinds, n)
            w.init()
            w.run(orch)  # warm-up: the first run pays its graph's first growth
            runs.append((w, orch))
        times = [[] for _ in specs]
        for _ in range(repeats):
            for (w, orch), t in zip(runs, times, strict=True):
                t0 = time.perf_counter()
                w.run(orch)
                t.append(time.perf_counter() - t0)
        return [n / statistics.median(t) for t in times]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    n, r = a.tasks - a.tasks % 2, a.repeats

    sub_alone, sub_idle_chip, chip_alone, chip_idle_sub, mixed = rates(
        [("sub", 0, 1), ("sub", 1, 1), ("chip", 1, 0), ("chip", 1, 1), ("mixed", 1, 1)], n, r
    )
    # The two halves alone, one after the other, as a rate over all n tasks.
    halves = n / ((n / 2) / sub_alone + (n / 2) / chip_alone)

    def pct(v: float, base: float) -> str:
        return f"{100 * v / base:.0f} %"

    load = os.getloadavg()
    print(
        f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of {r} runs; "
        f"one w.run() of {n:,} empty tasks per run\n"
    )
    print("| benchmark | tasks/s | of its baseline |")
    print("|---|---|---|")
    print(f"| sub-worker tasks, `num_sub_workers=1` (baseline) | {sub_alone:,.0f} | |")
    print(f"| sub-worker tasks, an idle chip added | {sub_idle_chip:,.0f} | {pct(sub_idle_chip, sub_alone)} |")
    print(f"| chip tasks, `num_chips=1` (baseline) | {chip_alone:,.0f} | |")
    print(f"| chip tasks, an idle sub-worker added | {chip_idle_sub:,.0f} | {pct(chip_idle_sub, chip_alone)} |")
    print(
        f"| mixed stream, sub and chip alternating (baseline: the halves alone, {halves:,.0f}) | "
        f"{mixed:,.0f} | {pct(mixed, halves)} |"
    )


if __name__ == "__main__":
    main()
