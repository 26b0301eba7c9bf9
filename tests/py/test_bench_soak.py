"""benchmarks/bench_soak.py at its --quick size: 1M std.noop tasks streamed through one run of a
2-chip Worker with max_unfinished=65,536 keep the parent's peak RSS (VmHWM, reset once the Worker
is idle) under a fixed bound, and never more tasks unfinished than the window: memory follows the
tasks in flight, not the tasks submitted. The whole --quick run prints a row per pass. No time is
asserted (the figures belong in docs/benchmarks.md)."""

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_soak.py"
WINDOW = 65536
# 65,536 records of ~700 bytes (~45 MiB) and the allocator's slack, with room for the machine's
# moods; without the window the same run on this machine piles up 50k-200k unfinished tasks.
BOUND_MIB = 100


def test_a_streamed_million_tasks_stays_under_the_bound():
    command = [sys.executable, str(BENCH), "--child", "--tasks", "1000000", "--window", str(WINDOW)]
    r = subprocess.run([*command, "--batch", "0", "--interval", "0.1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.splitlines()[-1])
    assert result["peak_unfinished"] <= WINDOW
    assert result["peak_mib"] < BOUND_MIB, result["peak_mib"]


def test_quick_run_prints_every_pass():
    r = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--interval", "0.2"], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    rows = [line.split(" | ")[0] for line in r.stdout.splitlines() if line.startswith("| ") and "µs a task" not in line]
    assert rows == [
        f"| one at a time, max_unfinished={WINDOW}",
        "| one at a time, no limit",
        f"| submit_many of 100000, max_unfinished={WINDOW}",
    ], r.stdout
