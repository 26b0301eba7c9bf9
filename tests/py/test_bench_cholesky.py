"""Smoke: benchmarks/bench_cholesky.py --quick runs end to end (its warm-up run is checked against
NumPy inside it), prints one row per tile size beside LAPACK's same-run figure, and writes its plot
as a PNG."""

import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BENCH = os.path.join(ROOT, "benchmarks", "bench_cholesky.py")


def test_quick_run_prints_the_table_and_writes_the_plot(tmp_path):
    png = tmp_path / "cholesky.png"
    r = subprocess.run(
        [sys.executable, BENCH, "--quick", "--plot", str(png)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    row = r"^\| 256 \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \| ([\d.]+) \| (-?\d+) µs \|$"
    rows = re.findall(row, r.stdout, re.M)
    assert [(tile, tasks) for tile, tasks, *_ in rows] == [("64", "20"), ("128", "4")], r.stdout
    assert all(
        float(gflops) > 0 and float(lapack) > 0 and float(serial) > 0 for _, _, gflops, lapack, _, serial, _ in rows
    ), r.stdout
    assert re.search(r"^n = 256: best tile (64|128), [\d.]+ GFLOP/s = [\d.]+x LAPACK", r.stdout, re.M), r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
