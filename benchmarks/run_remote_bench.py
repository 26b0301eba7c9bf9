"""Remote Workers against raw MPI, in one run over one transport: runs mpi_raw and bench_remote.py, prints the table.

    .venv/bin/python benchmarks/run_remote_bench.py [--rounds 1] [--quick]

Both programs run on 2 ranks under the mpirun command line of
`python -m simpler launch -n 2 --isolate` (simpler.cli.launch.command): TCP on the
loopback only, MPI's shared-memory transport off, and rank 1 in its own mount
namespace with a private /dev/shm (root only; without root both run without
--isolate, and the table says so). Each round runs the raw baseline, then the
simpler benchmark; with --rounds N every figure is the median over the rounds.

Goals (issue 12): the remote empty round trip (L4 -> remote L3 -> L4) at most
2x the raw ping-pong (blocking MPI_Send / MPI_Recv of the same frame sizes), and
64 MiB fetched + 64 MiB written back at least 70 % of raw MPI's bandwidth for
the same bytes (blocking, 64 MiB there and back). A local L3 child's round trip
(the same engine and Python work over shared memory) is measured in the same
run, so what MPI and the relay add is the difference. The raw polled columns wait as
MpiTransport does (spin, then sleep with backoff): the cost of not spinning a
core, apart from the rest of simpler.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Dict, List

from simpler.cli import launch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_RAW = os.path.join(ROOT, "build", "py", "benchmarks", "mpi_raw")
BENCH_REMOTE = os.path.join(ROOT, "benchmarks", "bench_remote.py")
TIMEOUT_S = 300


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_json(name: str, cmd: List[str]) -> Dict[str, float]:
    """Runs cmd (the mpirun job of program `name`) and returns the JSON of the last line its rank 0 printed."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout + p.stderr)
        raise RuntimeError(f"run_remote_bench: {name} exited {p.returncode} with no result")
    return json.loads(lines[-1])


def median_of(rounds: List[Dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rounds)


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="raw + simpler runs, alternated; medians over them")
    ap.add_argument("--repeats", type=int, default=9, help="repetitions inside each program")
    ap.add_argument("--quick", action="store_true", help="fewer round trips and repeats (a smoke run)")
    ap.add_argument(
        "--mpi-raw", default=MPI_RAW, help="the mpi_raw binary (built with the benchmarks when MPI is found)"
    )
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.repeats < 1:
        ap.error(f"--rounds and --repeats take a whole number from 1 (got {a.rounds} and {a.repeats})")
    if not os.access(a.mpi_raw, os.X_OK):
        sys.stderr.write(
            f"run_remote_bench: no raw MPI baseline at {a.mpi_raw}; build the benchmarks with MPI "
            "(./dev setup, with libopenmpi-dev installed)\n"
        )
        return 2
    isolate = os.geteuid() == 0
    repeats = 3 if a.quick else a.repeats
    raw_args = [
        "--repeats",
        str(repeats),
        "--bw-repeats",
        str(repeats),
        "--round-trips",
        "1000" if a.quick else "10000",
    ]
    bench_args = ["--repeats", str(repeats)] + (["--quick"] if a.quick else [])
    raw_cmd = launch.command(2, raw_args, isolate=isolate, python=a.mpi_raw)
    bench_cmd = launch.command(2, [BENCH_REMOTE, *bench_args], isolate=isolate)
    load_before = loadavg()
    raws, benches = [], []
    for _ in range(a.rounds):
        raws.append(run_json("mpi_raw", raw_cmd))
        benches.append(run_json("bench_remote.py", bench_cmd))
    load_after = loadavg()

    raw_rt = median_of(raws, "blocking_round_trip_us")
    raw_polled_rt = median_of(raws, "polled_round_trip_us")
    raw_bw = median_of(raws, "blocking_gib_s")
    raw_polled_bw = median_of(raws, "polled_gib_s")
    empty = median_of(benches, "empty_round_trip_us")
    chip = median_of(benches, "noop_chip_round_trip_us")
    local = median_of(benches, "local_empty_round_trip_us")
    bw = median_of(benches, "transfer_gib_s")
    mib = int(benches[0]["bytes"]) >> 20
    where = "--isolate (TCP only, private /dev/shm on rank 1)" if isolate else "not isolated (not root)"
    print(
        f"\nRemote Workers against raw MPI: 2 ranks, {where}; {a.rounds} round(s), {repeats} repeats each; "
        f"load average {load_before} before, {load_after} after\n"
    )
    print(
        "| benchmark | simpler | raw MPI, blocking | raw MPI, polled as MpiTransport | simpler / raw blocking "
        "| goal | |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| round trip, L4 -> remote L3 (empty orchestration) -> L4 | {empty:,.1f} µs | {raw_rt:,.1f} µs | "
        f"{raw_polled_rt:,.1f} µs | {empty / raw_rt:.2f}x | <= 2x | {verdict(empty <= 2 * raw_rt)} |"
    )
    print(
        f"| round trip, L4 -> remote L3 -> std.noop on its chip -> L4 | {chip:,.1f} µs | {raw_rt:,.1f} µs | "
        f"{raw_polled_rt:,.1f} µs | {chip / raw_rt:.2f}x | | |"
    )
    print(f"| reference: round trip, L4 -> local L3 (empty orchestration) -> L4, no MPI | {local:,.1f} µs | | | | | |")
    print(
        f"| remote minus local: what MPI and the relay add | {empty - local:,.1f} µs | {raw_rt:,.1f} µs | "
        f"{raw_polled_rt:,.1f} µs | {(empty - local) / raw_rt:.2f}x | | |"
    )
    print(
        f"| {mib} MiB fetched + {mib} MiB written back | {bw:.2f} GiB/s | {raw_bw:.2f} GiB/s | "
        f"{raw_polled_bw:.2f} GiB/s | {100 * bw / raw_bw:.0f} % | >= 70 % | {verdict(bw >= 0.7 * raw_bw)} |"
    )
    for name, what in (("empty", "remote, empty"), ("noop_chip", "remote, std.noop"), ("local_empty", "local, empty")):
        p10, p50, p90 = (median_of(benches, f"{name}_{q}_us") for q in ("p10", "p50", "p90"))
        print(f"\nsingle round trips, {what}: p10 {p10:,.1f} µs, p50 {p50:,.1f} µs, p90 {p90:,.1f} µs", end="")
    print(f"\n\nraw: {json.dumps(raws)}\nsimpler: {json.dumps(benches)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
