"""All-reduce bandwidth on 2 chips against a NumPy memcpy of the same bytes.

    .venv/bin/python benchmarks/bench_collectives.py [--mib 64] [--repeats 5] [--chips 2]

Each repeat is one `w.run(...)` whose orchestration function allocates a
domain over the chips with one FLOAT32 buffer of `--mib` MiB per chip, runs
`simpler.all_reduce` on it and leaves the domain: the time covers the domain's
allocation and release, the reduce-scatter and all-gather tasks and the run's
round trip. Before the timed repeats one run fills every rank from host
buffers, all-reduces, copies the result back and checks it against NumPy
(and one untimed warm-up run faults the windows in).

Prints a markdown table, medians of `--repeats`:
  - all_reduce: algorithm bandwidth (buffer bytes / time) and bus bandwidth
    (algorithm bandwidth x 2 (n - 1) / n: the bytes each rank moves, NCCL's
    convention);
  - memcpy: `np.copyto` of the same bytes between two host arrays, in the same
    process, the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import simpler
from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker, view_array

F32 = DataType.FLOAT32


def copy_args(src, dst) -> TaskArgs:
    ta = TaskArgs()
    ta.add_tensor(src, TensorArgType.INPUT)
    ta.add_tensor(dst, TensorArgType.OUTPUT_EXISTING)
    return ta


def check_once(w: Worker, copy, chips: int, count: int) -> None:
    """Fills each rank with its own data, all-reduces, and checks every rank against NumPy."""
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(count).astype(np.float32) for _ in range(chips)]
    hosts_in = [w.create_buffer(count * 4) for _ in range(chips)]
    hosts_out = [w.create_buffer(count * 4) for _ in range(chips)]
    for h, d in zip(hosts_in, data, strict=True):
        view_array(h.tensor((count,), F32))[...] = d

    def orch(o, _a, _c):
        with o.allocate_domain(
            "bench", workers=list(range(chips)), window_size=count * 4, buffers={"x": count * 4}
        ) as dom:
            for r in range(chips):
                o.submit_next_level(
                    copy,
                    copy_args(hosts_in[r].tensor((count,), F32), dom.buffer("x", r).tensor((count,), F32)),
                    worker=r,
                )
            simpler.all_reduce(o, dom, "x", F32)
            for r in range(chips):
                o.submit_next_level(
                    copy,
                    copy_args(dom.buffer("x", r).tensor((count,), F32), hosts_out[r].tensor((count,), F32)),
                    worker=r,
                )

    w.run(orch)
    want = np.sum(np.stack(data), axis=0, dtype=np.float32)
    for r in range(chips):
        if not np.array_equal(view_array(hosts_out[r].tensor((count,), F32)), want):
            raise SystemExit(f"all_reduce gave rank {r} a wrong result")
    for h in hosts_in + hosts_out:
        w.release_buffer(h, wait=True)


def time_all_reduce(w: Worker, chips: int, count: int) -> float:
    def orch(o, _a, _c):
        with o.allocate_domain(
            "bench", workers=list(range(chips)), window_size=count * 4, buffers={"x": count * 4}
        ) as dom:
            simpler.all_reduce(o, dom, "x", F32)

    t0 = time.perf_counter()
    w.run(orch)
    return time.perf_counter() - t0


def time_memcpy(count: int) -> float:
    src = np.ones(count, np.float32)
    dst = np.zeros(count, np.float32)
    np.copyto(dst, src)  # fault both in
    t0 = time.perf_counter()
    np.copyto(dst, src)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mib", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--chips", type=int, default=2)
    a = p.parse_args()
    nbytes = a.mib << 20
    count = nbytes // 4
    with Worker(level=3, num_chips=a.chips, window_heap_bytes=max(64 << 20, nbytes), task_timeout=600) as w:
        copy = w.register(ChipCallable("std.copy"))
        w.init()
        check_once(w, copy, a.chips, count)
        time_all_reduce(w, a.chips, count)  # warm-up
        reduce_s = statistics.median(time_all_reduce(w, a.chips, count) for _ in range(a.repeats))
        copy_s = statistics.median(time_memcpy(count) for _ in range(a.repeats))
    algbw = nbytes / reduce_s / 1e9
    busbw = algbw * 2 * (a.chips - 1) / a.chips
    print(
        f"all_reduce of {a.mib} MiB FLOAT32 on {a.chips} chips, median of {a.repeats} "
        f"(load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs):\n"
    )
    print("| what | median time | bandwidth |")
    print("| --- | --- | --- |")
    print(
        f"| `simpler.all_reduce` ({a.chips} chips) | {reduce_s * 1e3:.1f} ms | {algbw:.2f} GB/s algorithm, "
        f"{busbw:.2f} GB/s bus |"
    )
    print(f"| NumPy memcpy (`np.copyto`) | {copy_s * 1e3:.1f} ms | {nbytes / copy_s / 1e9:.2f} GB/s |")


if __name__ == "__main__":
    main()
