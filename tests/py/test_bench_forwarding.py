"""benchmarks/bench_forwarding.py runs (a --quick smoke run) and prints each row with a figure
(never asserted: this machine is shared; the figures belong in docs/benchmarks/fine-grained.md)."""

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_forwarding.py"


def test_quick_run_prints_every_row_with_a_figure():
    r = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--repeats", "1"], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and not line.startswith("| row")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| forwarded_args, per nested task",
        "| ForwardedScope.check, per submit",
        "| round trip, L3 -> chip (baseline)",
        "| round trip, L4 -> L3 -> chip",
        "| the hop (difference)",
    ], r.stdout
    for row in rows:
        assert re.search(r"\| -?\d+\.\d+ µs \|$", row), row
