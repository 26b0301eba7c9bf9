"""benchmarks/goals.py runs (a --quick smoke run) and prints one row per goal of
issue 14, each met, not met or no verdict (never asserted: this machine is
shared; the figures belong in docs/benchmarks/notes.md)."""

import subprocess
import sys
from pathlib import Path

GOALS = Path(__file__).resolve().parents[2] / "benchmarks" / "goals.py"


def test_quick_run_prints_every_goal_with_its_verdict():
    r = subprocess.run([sys.executable, str(GOALS), "--quick"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and not line.startswith("| goal")]
    assert len(rows) == 7, r.stdout
    for row in rows:
        verdict = row.rstrip(" |").rsplit("| ", 1)[1]
        assert verdict in ("met", "not met", "no verdict"), row
    assert "WRONG RESULT" not in r.stdout
