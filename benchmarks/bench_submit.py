"""Describing and submitting tasks from Python: what a submit costs (issue 14, item 3).

    .venv/bin/python benchmarks/bench_submit.py [--tasks 100000] [--repeats 5] [--quick]

Prints a markdown table of tasks/s, each row the median of `--repeats` runs
after one warm-up run (the first run of a Worker pays the page faults of its
graph's first growth). Every task has 4 tensor arguments (3 INPUT tiles and
one OUTPUT_EXISTING tile of 64 FLOAT32, each of its own buffer, so the tasks are
independent) and runs on the Worker's one sub-worker, which a first task holds
until every task is submitted: the rows time describing and inference only,
not running. Rows:
  - one at a time (the baseline): `orch.submit_sub(h, args)` in a Python loop
    over TaskArgs built beforehand; and building those TaskArgs in Python;
  - bulk: `orch.submit_sub_many(h, TaskArgsBatch.tiled(...))`: the tiling
    described ("describe": its operands checked, no tile built) then each
    task's tiles built, checked, inferred and recorded ("submit"), and the
    sum; and `submit_sub_many` over the prebuilt list of TaskArgs;
  - the reference: the C++ dependency tracker alone, bench_deps
    BM_SubmitTask/args:4/validate:1 (when built in build/py), no engine and no
    Python.
The load average is printed with the table (the figures are from a shared
machine unless it says otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simpler import DataType, MappedArgs, TaskArgs, TaskArgsBatch, TensorArgType, Worker

TILE = 64
TAGS = [TensorArgType.INPUT] * 3 + [TensorArgType.OUTPUT_EXISTING]
BENCH_DEPS = Path(__file__).resolve().parents[1] / "build" / "py" / "benchmarks" / "bench_deps"


def noop(_a: MappedArgs) -> None:
    return None


def hold(a: MappedArgs) -> None:
    """Waits until the file named by argument 0's bytes exists (at most 120 s)."""
    path = bytes(a.array(0)).rstrip(b"\0").decode()
    deadline = time.monotonic() + 120
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.001)


class Bench:
    def __init__(self, n: int) -> None:
        self.n = n
        # No window (max_unfinished=0): the hold task waits for the file the run writes once every task
        # is submitted, so all of them must go in before any runs.
        self.w = Worker(level=3, num_sub_workers=1, max_unfinished=0)
        self.h, self.hold = self.w.register(noop), self.w.register(hold)
        self.w.init()
        self.dir = tempfile.mkdtemp(prefix="bench_submit_")
        self.name = self.w.create_buffer(256)
        self.bufs = [self.w.create_buffer(n * TILE * 4) for _ in TAGS]
        self.whole = [b.tensor((n * TILE,), DataType.FLOAT32) for b in self.bufs]
        self.runs = 0

    def args_list(self) -> list:
        out = []
        tiles = [
            [b.tensor((TILE,), DataType.FLOAT32, byte_offset=k * TILE * 4) for k in range(self.n)] for b in self.bufs
        ]
        for k in range(self.n):
            ta = TaskArgs()
            for i, tag in enumerate(TAGS):
                ta.add_tensor(tiles[i][k], tag)
            out.append(ta)
        return out

    def timed(self, body) -> float:
        """Seconds `body(orch)` took inside a run whose sub-worker is held meanwhile."""
        self.runs += 1
        release = Path(self.dir) / f"go-{self.runs}"
        path = str(release).encode()
        arr = self.name.array((256,), DataType.UINT8)
        arr[...] = 0
        arr[: len(path)] = list(path)
        took = []

        def orch(o, _a, _c):
            o.submit_sub(self.hold, _one(self.name.tensor((256,), DataType.UINT8)))
            t0 = time.perf_counter()
            body(o)
            took.append(time.perf_counter() - t0)
            release.touch()

        self.w.run(orch)
        return took[0]

    def close(self) -> None:
        self.w.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _one(t) -> TaskArgs:
    ta = TaskArgs()
    ta.add_tensor(t, TensorArgType.INPUT)
    return ta


def median_rate(bench: Bench, body, repeats: int) -> float:
    bench.timed(body)  # warm-up
    return bench.n / statistics.median(bench.timed(body) for _ in range(repeats))


def deps_reference() -> str:
    if not BENCH_DEPS.exists():
        return "n/a (bench_deps not built)"
    out = subprocess.run(
        [
            str(BENCH_DEPS),
            "--benchmark_filter=BM_SubmitTask/args:4/validate:1$",
            "--benchmark_format=json",
            "--benchmark_min_time=0.5",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    b = json.loads(out)["benchmarks"][0]
    ns = b["real_time"] if b["time_unit"] == "ns" else b["real_time"] * 1000
    return f"{1e9 / ns:,.0f} tasks/s ({ns / 1000:.2f} us/task)"


def measure(quick: bool) -> dict:
    """benchmarks/goals.py's figures (tasks/s): one at a time (`submit_sub` over prebuilt TaskArgs)
    and bulk (describe + submit: `submit_sub_many(h, TaskArgsBatch.tiled(...))`)."""
    n, repeats = (10_000, 2) if quick else (100_000, 5)
    bench = Bench(n)
    try:
        prebuilt = bench.args_list()
        ops = [(t, tag, (TILE,)) for t, tag in zip(bench.whole, TAGS, strict=True)]
        return {
            "one": median_rate(bench, lambda o: [o.submit_sub(bench.h, t) for t in prebuilt], repeats),
            "bulk": median_rate(bench, lambda o: o.submit_sub_many(bench.h, TaskArgsBatch.tiled(ops)), repeats),
        }
    finally:
        bench.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="10,000 tasks, 2 repeats")
    a = p.parse_args()
    if a.quick:
        a.tasks, a.repeats = 10_000, 2
    bench = Bench(a.tasks)
    rows = []
    try:
        prebuilt = bench.args_list()
        t0 = time.perf_counter()
        bench.args_list()
        rows.append(
            ("one at a time: build 4-argument TaskArgs in Python (not a submit)", a.tasks / (time.perf_counter() - t0))
        )
        rows.append(
            (
                "one at a time: `orch.submit_sub` in a loop (TaskArgs prebuilt) — the baseline",
                median_rate(bench, lambda o: [o.submit_sub(bench.h, t) for t in prebuilt], a.repeats),
            )
        )
        ops = [(t, tag, (TILE,)) for t, tag in zip(bench.whole, TAGS, strict=True)]
        described = []
        rows.append(
            (
                "bulk: describe, `TaskArgsBatch.tiled` (operands checked; tiles built at submit)",
                median_rate(bench, lambda o: described.append(TaskArgsBatch.tiled(ops)), a.repeats),
            )
        )
        batch = TaskArgsBatch.tiled(ops)
        rows.append(
            (
                "bulk: submit, `orch.submit_sub_many(h, batch)` (tiles, checks, inference, records)",
                median_rate(bench, lambda o: o.submit_sub_many(bench.h, batch), a.repeats),
            )
        )
        rows.append(
            (
                "bulk: describe + submit, `submit_sub_many(h, TaskArgsBatch.tiled(...))`",
                median_rate(bench, lambda o: o.submit_sub_many(bench.h, TaskArgsBatch.tiled(ops)), a.repeats),
            )
        )
        rows.append(
            (
                "bulk: `submit_sub_many(h, list_of_TaskArgs)` (TaskArgs prebuilt)",
                median_rate(bench, lambda o: o.submit_sub_many(bench.h, prebuilt), a.repeats),
            )
        )
    finally:
        bench.close()
    load = os.getloadavg()
    print(
        f"{a.tasks:,} tasks of 4 tensor arguments per run; median of {a.repeats} runs after a warm-up; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; "
        f"Python {sys.version.split()[0]}\n"
    )
    print("| what | tasks/s | us/task |")
    print("| --- | ---: | ---: |")
    for what, rate in rows:
        print(f"| {what} | {rate:,.0f} | {1e6 / rate:.2f} |")
    print(f"| reference: C++ inference alone (bench_deps BM_SubmitTask/args:4/validate:1) | {deps_reference()} | |")


if __name__ == "__main__":
    main()
