"""Issue 14's speed goals, measured in one run: each goal's figure beside its
baseline from the same run, and whether it is met.

    .venv/bin/python benchmarks/goals.py [--quick]

Goals (docs/benchmarks/notes.md says where each stands and why; docs/benchmarks/machine.md, the
machine's states that move the round trips):
  1. a chain of 20,000 dependent std.copy tasks on one chip, from Python: >= 150,000 tasks/s
     (baseline: the chip's own rate, 1,000 empty tasks inside one chip run, bench_chip);
  2. Python round trip (one empty task per w.run, default spin policy): median <= 4 us and the
     90th percentile of 10 repetitions' medians <= 1.5x the median (baseline: raw spin ping-pong),
     judged over the repetitions whose pure-Python reference loop ran at the run's quick speed
     (the others, on a CPU the host slowed, are reported beside them);
  3. C++ hot round trip (bench_worker BM_WorkerRoundTripSub, hot) <= 3x (raw spin ping-pong +
     decode of a one-tensor blob) measured in the same bench_worker run; not judged when that
     run's reference chase (BM_ReferenceChase) was slowed in most repetitions;
  4. bulk submission >= 1,000,000 tasks/s described and inferred from Python, and >= 300,000 tasks/s
     one at a time (bench_submit.py, when this build has a bulk form);
  5. std.matmul (512 x 512 FLOAT32, one chip, one core thread, zero-copy) within 1.3x of
     single-threaded BLAS (NumPy's, OPENBLAS_NUM_THREADS=1) on the same machine;
  6. candidate lookup among 10,000 live 8x8 tiles (bench_deps) <= 1 us.
Prints the load average: the goals are stated for a quiet machine (load under 1).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "build" / "py" / "benchmarks"
sys.path.insert(0, str(HERE))


@dataclass
class Goal:
    name: str
    figure: str
    baseline: str
    goal: str
    met: Optional[bool]  # None: no verdict (not measured in this build, a busy baseline, a slowed CPU)


def cpp_repetitions(binary: str, pattern: str, repetitions: int) -> Dict[str, List[float]]:
    """Real time (ns) of each repetition of each benchmark of `binary` matching `pattern`."""
    exe = BUILD / binary
    if not exe.exists():
        raise FileNotFoundError(f"{exe} (./dev setup builds the benchmarks)")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        # The repetitions of the matched benchmarks interleaved in random order: a baseline and
        # its figure then sample the same stretch of the run (this VM changes its cross-core cost
        # ~5x from one minute to the next, and in order they would straddle a change).
        subprocess.run(
            [
                str(exe),
                f"--benchmark_filter={pattern}",
                f"--benchmark_repetitions={repetitions}",
                "--benchmark_enable_random_interleaving=true",
                f"--benchmark_out={out.name}",
                "--benchmark_out_format=json",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        data = json.load(open(out.name))
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    runs: Dict[str, List[float]] = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "iteration":
            runs.setdefault(b["run_name"], []).append(b["real_time"] * scale[b["time_unit"]])
    return runs


def medians_of(runs: Dict[str, List[float]]) -> Dict[str, float]:
    """The median of each benchmark's repetitions."""
    return {name: statistics.median(values) for name, values in runs.items()}


def cpp_medians(binary: str, pattern: str, repetitions: int) -> Dict[str, float]:
    """Median real time (ns) of each benchmark of `binary` matching `pattern`."""
    return medians_of(cpp_repetitions(binary, pattern, repetitions))


def fmt_ns(ns: float) -> str:
    return f"{ns / 1e3:,.2f} µs" if ns >= 1e3 else f"{ns:,.0f} ns"


# -- 1: the chain on a chip ------------------------------------------------------------
def chip_chain(quick: bool) -> Goal:
    import bench_worker

    n = 2_000 if quick else 20_000
    rate = bench_worker.throughput("chip", "chain", n, 1 if quick else 3)
    own = cpp_medians("bench_chip", "BM_ChipEmptyTasks/1000/", 1 if quick else 3)
    own_rate = 1000 / (next(iter(own.values())) / 1e9)
    return Goal(
        "chain of dependent std.copy tasks on one chip",
        f"{rate:,.0f} tasks/s ({n:,} tasks)",
        f"the chip's own rate {own_rate:,.0f} tasks/s",
        ">= 150,000 tasks/s",
        rate >= 150_000,
    )


# -- 2: the Python round trip ------------------------------------------------------------
def python_round_trip(quick: bool) -> Goal:
    from simpler import TaskArgs, Worker

    def noop(_args):
        return None

    reps, calls = (3, 200) if quick else (10, 1_000)
    medians: List[float] = []
    references: List[float] = []
    shared = 0
    with Worker(level=3, num_sub_workers=1) as w:
        h = w.register(noop)
        w.init()
        empty = TaskArgs()

        def orch(o, _a, _c):
            o.submit_sub(h, empty)

        for _ in range(100):
            w.run(orch)
        for _ in range(reps):
            times, reference = [], []
            switched_before = involuntary_switches()
            for i in range(calls):
                t0 = time.perf_counter_ns()
                w.run(orch)
                times.append(time.perf_counter_ns() - t0)
                if i % 100 == 50:
                    reference.append(reference_loop_ns())
            medians.append(statistics.median(times) / 1e3)
            references.append(statistics.median(reference))
            # A thread that is switched out about once per call shares its core with a runnable
            # peer: its hand-offs wait for time slices, not for the peer's store.
            shared += involuntary_switches() - switched_before >= calls // 2
    raw = cpp_medians("bench_worker", "BM_RawSpinPingPong/", 1 if quick else 3)
    # A repetition whose reference loop ran SLOWED times slower than the run's quickest ran on a
    # slowed CPU: the host then runs its other hyperthread beside this vCPU, every memory-touching
    # instruction of the driver and the child slows alike (a register-only loop does not), and the
    # round trip in reference-loop steps stays what it was (docs/benchmarks/machine.md, "The slowed
    # CPU"). The verdict is taken over the other repetitions, when there are enough; a run slowed
    # throughout has no quick repetition to tell it by, and reads as measured.
    quickest = min(references)
    calm = [m for m, r in zip(medians, references, strict=True) if r <= SLOWED * quickest]
    slowed = len(medians) - len(calm)
    in_steps = [m * 1e3 / r for m, r in zip(medians, references, strict=True)]
    figure = (
        f"median {statistics.median(medians):.2f} µs, p90 {np.percentile(medians, 90):.2f} µs "
        f"({reps} repetitions of {calls:,} calls: {', '.join(f'{m:.2f}' for m in sorted(medians))}; "
        f"{shared} with the driving thread switched out about once per call; {slowed} on a slowed CPU "
        f"(reference loop {quickest:.0f}-{max(references):.0f} ns a step; a round trip "
        f"{min(in_steps):.0f}-{max(in_steps):.0f} steps)"
    )
    judged = calm if len(calm) >= (reps + 1) // 2 else []
    if judged:
        median, p90 = statistics.median(judged), float(np.percentile(judged, 90))
        if slowed:
            figure += f"; the {len(judged)} others: median {median:.2f} µs, p90 {p90:.2f} µs"
        met: Optional[bool] = median <= 4.0 and p90 <= 1.5 * median
    else:
        figure += "; not judged: the CPU was slowed for most of the run"
        met = None
    return Goal(
        "Python round trip, one empty task per w.run",
        figure,
        f"raw spin ping-pong {fmt_ns(next(iter(raw.values())))}",
        "median <= 4 µs, p90 <= 1.5x median",
        met,
    )


# A repetition whose reference loop is this many times slower than the run's quickest ran on a
# slowed CPU (the quick state's own spread across repetitions is under 1.15x).
SLOWED = 1.3


def reference_loop_ns() -> float:
    """Nanoseconds per step of a fixed pure-Python loop: how fast this thread runs Python now."""
    t0 = time.perf_counter_ns()
    x = 0
    for i in range(200):
        x += i
    return (time.perf_counter_ns() - t0) / 200


def reference_speed_ns() -> float:
    """reference_loop_ns() now: the median of 50."""
    return statistics.median(reference_loop_ns() for _ in range(50))


def involuntary_switches() -> int:
    """Times the calling thread was switched out while runnable (preempted, or yielded to another)."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


# -- 3: the C++ hot round trip --------------------------------------------------------------
# A raw spin ping-pong reads ~0.1 or ~0.5 µs when its two processes each have a core; past this
# it is waiting for time slices.
RAW_PING_PONG_BUSY_NS = 2_000.0


def cpp_round_trip(quick: bool) -> Goal:
    reps = 1 if quick else 5
    runs = cpp_repetitions(
        "bench_worker",
        "BM_RawSpinPingPong/|BM_DecodeOneTensorBlob|BM_ReferenceChase|BM_WorkerRoundTripSub/regime:0/",
        reps,
    )
    m = medians_of(runs)
    raw = m["BM_RawSpinPingPong/real_time"] + m["BM_DecodeOneTensorBlob"]
    hot = m["BM_WorkerRoundTripSub/regime:0/real_time"]
    chase = runs["BM_ReferenceChase"]
    name, base = "C++ hot round trip (bench_worker)", f"raw spin ping-pong + decode {fmt_ns(raw)}"
    if raw > RAW_PING_PONG_BUSY_NS:
        # Two spinning processes that do not each have a core hand off once per time slice: the
        # baseline then measures the scheduler, and a ratio against it says nothing.
        return Goal(
            name,
            f"{fmt_ns(hot)}; not judged: the baseline shows no free core for the two processes",
            base,
            "<= 3x the baseline",
            None,
        )
    figure = f"{fmt_ns(hot)} ({hot / raw:.1f}x; reference chase {fmt_ns(min(chase))}-{fmt_ns(max(chase))})"
    if statistics.median(chase) > SLOWED * min(chase):
        # The round trip touches memory and the ping-pong one line: on a CPU the host slowed (see
        # python_round_trip) the ratio grows with the slowdown, not with the runtime.
        return Goal(
            name, figure + "; not judged: the CPU was slowed for most of the run", base, "<= 3x the baseline", None
        )
    return Goal(name, figure, base, "<= 3x the baseline", hot <= 3 * raw)


# -- 4: submission from Python -----------------------------------------------------------------
def submission(quick: bool) -> List[Goal]:
    try:
        bench_submit = importlib.import_module("bench_submit")
        measure: Callable[[bool], Dict[str, float]] = bench_submit.measure
    except (ImportError, AttributeError):
        return [
            Goal(
                "bulk submission from Python",
                "not measured: this build has no bulk form",
                "",
                ">= 1,000,000 tasks/s",
                None,
            ),
            Goal(
                "one-at-a-time submission from Python", "not measured (bench_submit.py)", "", ">= 300,000 tasks/s", None
            ),
        ]
    r = measure(quick)
    return [
        Goal(
            "bulk submission from Python",
            f"{r['bulk']:,.0f} tasks/s",
            f"one at a time {r['one']:,.0f} tasks/s",
            ">= 1,000,000 tasks/s",
            r["bulk"] >= 1_000_000,
        ),
        Goal(
            "one-at-a-time submission from Python",
            f"{r['one']:,.0f} tasks/s",
            f"C++ inference {r['cpp']:,.0f} tasks/s" if "cpp" in r else "",
            ">= 300,000 tasks/s",
            r["one"] >= 300_000,
        ),
    ]


# -- 5: std.matmul against BLAS -------------------------------------------------------------------
_BLAS = """
import os, statistics, sys, time
import numpy as np
n, reps = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
a @ b
times = []
for _ in range(reps):
    t0 = time.perf_counter(); a @ b; times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""


def matmul_vs_blas(quick: bool) -> Goal:
    from simpler import CallConfig, ChipCallable, DataType, TaskArgs, TensorArgType, Worker

    n, reps = (256, 3) if quick else (512, 5)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    blas = float(
        subprocess.run(
            [sys.executable, "-c", _BLAS, str(n), str(reps)], env=env, check=True, capture_output=True, text=True
        ).stdout
    )
    f32 = DataType.FLOAT32
    with Worker(level=3, num_chips=1, chip_core_threads=1, zero_copy=True) as w:
        mm = w.register(ChipCallable("std.matmul"))
        w.init()
        a, b, c = (w.create_buffer(n * n * 4) for _ in range(3))
        rng = np.random.default_rng(0)
        a.array((n, n), f32)[...] = rng.standard_normal((n, n), dtype=np.float32)
        b.array((n, n), f32)[...] = rng.standard_normal((n, n), dtype=np.float32)
        ta = TaskArgs()
        for buf, tag in ((a, TensorArgType.INPUT), (b, TensorArgType.INPUT), (c, TensorArgType.OUTPUT_EXISTING)):
            ta.add_tensor(buf.tensor((n, n), f32), tag)

        def orch(o, _a, _c):
            o.submit_next_level(mm, ta, CallConfig(block_dim=1), worker=0)

        w.run(orch)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            w.run(orch)
            times.append(time.perf_counter() - t0)
        ok = np.allclose(c.array((n, n), f32), a.array((n, n), f32) @ b.array((n, n), f32), rtol=1e-3, atol=1e-2)
    chip = statistics.median(times)
    gflops = 2 * n**3 / 1e9
    return Goal(
        f"std.matmul {n}x{n} FLOAT32, one core thread",
        f"{chip * 1e3:.1f} ms ({gflops / chip:.1f} GFLOP/s, {chip / blas:.1f}x BLAS){'' if ok else ' WRONG RESULT'}",
        f"single-threaded BLAS {blas * 1e3:.2f} ms ({gflops / blas:.1f} GFLOP/s)",
        "<= 1.3x BLAS",
        ok and chip <= 1.3 * blas,
    )


# -- 6: the tile lookup -----------------------------------------------------------------------------
def tile_lookup(quick: bool) -> Goal:
    m = cpp_medians("bench_deps", "BM_CandidateLookupTiles/(100|10000)$", 1 if quick else 5)
    big, small = m["BM_CandidateLookupTiles/10000"], m["BM_CandidateLookupTiles/100"]
    return Goal(
        "candidate lookup, 10,000 live 8x8 tiles",
        fmt_ns(big),
        f"100 live tiles {fmt_ns(small)}",
        "<= 1 µs",
        big <= 1_000,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repetition (a smoke run)")
    opts = ap.parse_args(argv)
    load = os.getloadavg()
    speed = reference_speed_ns()
    goals: List[Goal] = []
    for measure in (chip_chain, python_round_trip, cpp_round_trip, submission, matmul_vs_blas, tile_lookup):
        result = measure(opts.quick)
        goals.extend(result if isinstance(result, list) else [result])
    end_load = os.getloadavg()
    end_speed = reference_speed_ns()
    quiet = "" if max(load[0], end_load[0]) < 1 else " — not a quiet machine: the goals are stated for load under 1"
    print(
        f"\nIssue 14's goals ({'quick smoke run' if opts.quick else 'full run'}; load average "
        f"{load[0]:.2f} at the start, {end_load[0]:.2f} at the end{quiet}; a pure-Python reference loop at "
        f"{speed:.0f} ns a step at the start, {end_speed:.0f} at the end: a CPU the host slows runs it 1.3-2x "
        "slower, docs/benchmarks/machine.md)"
    )
    print("| goal | figure | baseline (same run) | target | met |")
    print("|---|---|---|---|---|")
    for g in goals:
        met = "no verdict" if g.met is None else ("met" if g.met else "not met")
        print(f"| {g.name} | {g.figure} | {g.baseline} | {g.goal} | {met} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
