"""Remote Workers over Open MPI: what an L4 -> remote L3 -> L4 round trip and a 64 MiB transfer cost.

    .venv/bin/python -m simpler launch -n 2 --isolate benchmarks/bench_remote.py [--repeats 9] [--quick]

An SPMD script: every rank runs it (rank 0 is the L4, with one local L3
child of 1 chip, child 0, and one remote L3 child of 1 chip, child 1, which
rank 1 serves) and rank 0 prints one line of JSON. Its raw MPI
baseline is benchmarks/mpi_raw.cpp; benchmarks/run_remote_bench.py runs both
under the same mpirun flags and prints the comparison.
  - round trip: N `w4.run` calls, each submitting one task to the remote L3,
    µs per call, the median over --repeats runs of the mean (and the 10th,
    50th and 90th percentiles of single calls); the L3 orchestration submits
    nothing (`empty`: L4 -> remote L3 -> L4 alone) or one empty chip task
    (`noop_chip`: `std.noop` on the remote chip, which adds the L3's own hop);
    and, as the same run's reference without MPI, `empty` on the local L3 child
    (L4 -> forked L3 -> L4: the same engine and Python work, over shared memory).
  - transfer: one task with a 64 MiB INPUT view (fetched by the remote L3) and
    a 64 MiB OUTPUT_EXISTING view of a buffer created with AccessMode.WRITE
    (not fetched; written back before the task is done), whose L3
    orchestration does nothing: the bytes move whatever the orchestration does,
    so what is timed is the transfer and the round trip around it. Seconds per
    task (median over --repeats) and 128 MiB / that time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from simpler import ChipCallable, TaskArgs, TensorArgType, Worker
from simpler._core import AccessMode, DataType, remote_payload_bytes

MIB = 1 << 20
LOCAL, REMOTE = 0, 1  # the L4's children


def empty(o, a, c):
    """The L3 orchestration of an empty remote task: submits nothing."""


def noop_chip(o, a, c):
    """The L3 orchestration of a remote task that runs one empty chip task."""
    o.submit_next_level(_NOOP, a, worker=0)


def transfer(o, a, c):
    """The L3 orchestration of the transfer task: nothing; the views' bytes move around it."""


def median_of(run, repeats):
    return statistics.median(run() for _ in range(repeats))


def round_trip_us(w4, handle, child, k, repeats):
    """Median over repeats of the mean µs of k one-task w4.run calls to `child` (after k // 10 warm-up calls),
    and the 10th, 50th and 90th percentiles of the single calls' µs over all repeats."""
    none = TaskArgs()
    calls = []

    def orch(o, _a, _c):
        o.submit_next_level(handle, none, worker=child)

    for _ in range(max(1, k // 10)):
        w4.run(orch)

    def run():
        clock = time.perf_counter
        t0 = last = clock()
        for _ in range(k):
            w4.run(orch)
            now = clock()
            calls.append(now - last)
            last = now
        return (last - t0) / k * 1e6

    mean = median_of(run, repeats)
    deciles = statistics.quantiles(calls, n=10)
    return mean, deciles[0] * 1e6, deciles[4] * 1e6, deciles[8] * 1e6


def transfer_s(w4, handle, nbytes, repeats):
    """Median seconds of one w4.run of one task moving nbytes in and nbytes out (after one warm-up,
    which creates the remote host's copies), and the payload bytes each way per task."""
    n = nbytes // 4
    src = w4.alloc_shared_tensor((n,), DataType.FLOAT32)
    dst = w4.alloc_shared_tensor((n,), DataType.FLOAT32, access=AccessMode.WRITE)
    src.array()[:] = 1.0

    def orch(o, _a, _c):
        ta = TaskArgs()
        ta.add_tensor(src.tensor((n,)), TensorArgType.INPUT)
        ta.add_tensor(dst.tensor((n,)), TensorArgType.OUTPUT_EXISTING)
        o.submit_next_level(handle, ta, worker=REMOTE)

    w4.run(orch)
    sent0, received0 = remote_payload_bytes(1)

    def run():
        t0 = time.perf_counter()
        w4.run(orch)
        return time.perf_counter() - t0

    s = median_of(run, repeats)
    sent1, received1 = remote_payload_bytes(1)
    return s, (sent1 - sent0) // repeats, (received1 - received0) // repeats


_NOOP = None


def main(argv=None):
    global _NOOP
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--round-trips", type=int, default=2000, help="w4.run calls per round-trip run")
    ap.add_argument("--mib", type=int, default=64, help="MiB each way of the transfer task")
    ap.add_argument("--quick", action="store_true", help="fewer calls and repeats (a smoke run)")
    a = ap.parse_args(argv)
    if a.quick:
        a.repeats, a.round_trips = 3, 200
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1))  # child 0: LOCAL
    w4.add_remote_workers(1, num_chips=1)  # child 1: REMOTE, rank 1
    _NOOP = w4.register(ChipCallable("std.noop"))
    handles = {fn.__name__: w4.register(fn) for fn in (empty, noop_chip, transfer)}
    w4.init()  # rank 1 serves here and never returns
    with w4:
        out = {"repeats": a.repeats, "round_trips": a.round_trips}
        for name, child in (("empty", REMOTE), ("noop_chip", REMOTE), ("local_empty", LOCAL)):
            fn = handles[name.removeprefix("local_")]
            mean, p10, p50, p90 = round_trip_us(w4, fn, child, a.round_trips, a.repeats)
            out.update(
                {f"{name}_round_trip_us": mean, f"{name}_p10_us": p10, f"{name}_p50_us": p50, f"{name}_p90_us": p90}
            )
        nbytes = a.mib * MIB
        s, sent, received = transfer_s(w4, handles["transfer"], nbytes, a.repeats)
        out.update(
            bytes=nbytes,
            transfer_s=s,
            transfer_gib_s=2 * nbytes / s / (1 << 30),
            payload_sent=sent,
            payload_received=received,
        )
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
