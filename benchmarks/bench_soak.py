"""A run's memory through a long stream of tasks: one run, millions of tasks, RSS sampled (issue 73).

    .venv/bin/python benchmarks/bench_soak.py [--tasks 10000000] [--window 65536] [--plot PNG] [--quick]

Each pass runs in a fresh process: a level-3 Worker of 2 chips, initialised and warmed up (one run
of 1,000 tasks), whose RSS then is its idle RSS. One run submits `--tasks` `std.noop` chip tasks
from Python, alternating the chips, holding no handle; a thread samples the process's RSS
(/proc/self/statm) and the Worker's progress every second (`--interval`); the peak is the kernel's
(VmHWM, reset once the Worker is idle), between the samples too. Passes:
  - one at a time, `Worker(max_unfinished=--window)`: a submit waits while that many tasks are
    unfinished, so the tasks in flight, and with them the engine's memory, stay bounded;
  - one at a time, no limit (max_unfinished=0, the baseline: before the window, every Worker):
    submitting outpaces the chips on a small machine, and the unfinished tasks, each holding its
    record, pile up;
  - batches of `--batch` tasks (`submit_many`), with the window: the batch in flight's cost a task.
Prints a markdown table (µs a task, idle RSS, peak RSS above idle, peak unfinished tasks as sampled, bytes per
task in flight at the peak) and, with --plot, RSS above idle against time for each pass.
--quick: 1M tasks (the bound's test in tests/py/test_bench_soak.py runs this size).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

from simpler import ChipCallable, TaskArgs, Worker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MiB = 1 << 20


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    """The process's peak RSS since reset_peak_rss() (VmHWM)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no VmHWM")


def reset_peak_rss() -> None:
    """Makes VmHWM the RSS now (Linux: 5 written to /proc/self/clear_refs)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")


def one_pass(tasks: int, window: int, batch: int, interval: float) -> dict:
    """Runs one pass in this process; returns its figures and RSS samples."""
    w = Worker(level=3, num_chips=2, max_unfinished=window)
    noop = w.register(ChipCallable("std.noop"))
    w.init()
    empty = TaskArgs()
    try:
        w.run(lambda o, _a, _c: [o.submit_next_level(noop, empty, None, worker=i & 1) for i in range(1000)])
        idle = rss_bytes()
        reset_peak_rss()
        samples: list = []
        done = threading.Event()

        def sample() -> None:
            t0 = time.monotonic()
            while True:
                p = w.progress()
                samples.append((time.monotonic() - t0, rss_bytes() - idle, p.unfinished))
                if done.wait(interval):
                    return

        sampler = threading.Thread(target=sample)
        sampler.start()

        def streamed(o, _a, _c) -> None:
            submit = o.submit_next_level
            for i in range(tasks):
                submit(noop, empty, None, worker=i & 1)

        def batched(o, _a, _c) -> None:
            args = [empty] * batch
            workers = [i & 1 for i in range(batch)]
            for start in range(0, tasks, batch):
                n = min(batch, tasks - start)
                o.submit_many(noop, args[:n], workers[:n])

        t0 = time.perf_counter()
        w.run(batched if batch else streamed)
        seconds = time.perf_counter() - t0
        peak = peak_rss_bytes() - idle  # exact, between the samples too
        done.set()
        sampler.join()
    finally:
        w.close()
    peak_unfinished = max(s[2] for s in samples)
    return {
        "us_per_task": seconds / tasks * 1e6,
        "idle_mib": idle / MiB,
        "peak_mib": peak / MiB,
        "peak_unfinished": peak_unfinished,
        "samples": samples,
    }


PASSES = [
    ("one at a time, max_unfinished={window}", "window", 0),
    ("one at a time, no limit", "none", 0),
    ("submit_many of {batch}, max_unfinished={window}", "window", 1),
]


def run_pass(args: argparse.Namespace, window: int, batch: int) -> dict:
    """One pass in a child process of its own (a pass's pooled memory would stay for the next)."""
    command = [sys.executable, __file__, "--child", "--tasks", str(args.tasks), "--window", str(window)]
    command += ["--batch", str(batch), "--interval", str(args.interval)]
    r = subprocess.run(command, capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"bench_soak pass {command[2:]} failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.splitlines()[-1])


def plot(results: list, path: str, tasks: int) -> None:
    import plots  # benchmarks/plots.py

    fig, ax = plots.new_figure()
    for label, r in results:
        ax.plot([s[0] for s in r["samples"]], [s[1] / MiB for s in r["samples"]], label=label)
    ax.axhline(100, color="grey", linestyle="--", linewidth=0.8, label="goal: 100 MiB above idle")
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("parent RSS above the idle Worker's (MiB)")
    ax.set_title(f"{tasks:,} std.noop tasks through one run, 2 chips")
    plots.save_figure(fig, ax, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=10_000_000)
    ap.add_argument("--window", type=int, default=65536, help="max_unfinished of the bounded passes (the default's)")
    ap.add_argument("--batch", type=int, default=100_000, help="tasks per submit_many of the batch pass")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples")
    ap.add_argument("--plot", help="write RSS against time to this PNG")
    ap.add_argument("--quick", action="store_true", help="1M tasks")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.tasks = 1_000_000
    if args.child:
        print(json.dumps(one_pass(args.tasks, args.window, args.batch, args.interval)))
        return
    results = []
    for label, limit, batched in PASSES:
        window = args.window if limit == "window" else 0
        label = label.format(window=window, batch=args.batch)
        results.append((label, run_pass(args, window, args.batch if batched else 0)))
    print(f"{args.tasks:,} std.noop tasks through one run, 2 chips, from Python; load average {os.getloadavg()[0]:.2f}")
    print()
    print(
        "| pass | µs a task | idle RSS (MiB) | peak RSS above idle (MiB) | peak unfinished (sampled) "
        "| ≈ B a task in flight |"
    )
    print("|---|---|---|---|---|---|")
    for label, r in results:
        per_task = r["peak_mib"] * MiB / max(1, r["peak_unfinished"])
        print(
            f"| {label} | {r['us_per_task']:.2f} | {r['idle_mib']:.1f} | {r['peak_mib']:.1f} "
            f"| {r['peak_unfinished']:,} | {per_task:.0f} |"
        )
    if args.plot:
        plot(results, args.plot, args.tasks)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
