"""Smoke: benchmarks/bench_alternatives.py --quick runs end to end and prints its table: one row per
system that could be imported, four measured cells per row (the zero-copy chip row measures the
64 MiB workload only), and a "skipped" line for each alternative that could not (Ray and Dask are
not project dependencies, so on CI they are skipped)."""

import importlib.util
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BENCH = os.path.join(ROOT, "benchmarks", "bench_alternatives.py")


def importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_quick_run_prints_the_table():
    r = subprocess.run(
        [sys.executable, BENCH, "--quick"], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert re.search(r"^load average [\d.]+ [\d.]+ [\d.]+ \(\d+ cores\); medians of 2 rounds", out, re.M), out
    lines = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert lines[0].startswith("| system | round trip, empty task | independent empty tasks | chain"), out
    rows = {ln.split(" | ")[0][2:]: [c.strip() for c in ln.strip("| ").split(" | ")[1:]] for ln in lines[1:]}

    expected = ["simpler, 2 sub-workers", "simpler, 2 chips", "simpler, 2 chips, zero-copy", "multiprocessing.Pool(2)"]
    if importable("torch"):
        expected.append("torch.multiprocessing")
    # An alternative that imports but cannot start on this machine is a skipped line saying why.
    dask_name = "Dask distributed, 2 procs" if importable("distributed") else "Dask, multiprocessing scheduler"
    for name, module in ((dask_name, "dask"), ("Ray, num_cpus=2", "ray")):
        if importable(module) and not re.search(rf"^{re.escape(name)}: skipped, could not start", out, re.M):
            expected.append(name)
        elif not importable(module):
            assert re.search(rf"^{re.escape(name)}: skipped, {module} not importable", out, re.M), out
    assert sorted(rows) == sorted(expected), out

    for name, cells in rows.items():
        assert len(cells) == 4, (name, cells)
        if name.endswith("zero-copy"):
            assert cells[:3] == ["—", "—", "—"], (name, cells)
            cells = cells[3:]
        else:
            assert re.fullmatch(r"[\d,.]+ µs \(median of [\d,]+ calls\)", cells[0]), (name, cells)
            assert re.fullmatch(r"[\d,]+ tasks/s \([\d.]+ s for [\d,]+\)", cells[1]), (name, cells)
            assert re.fullmatch(r"[\d,]+ tasks/s \([\d.]+ s for [\d,]+\)", cells[2]), (name, cells)
        assert re.fullmatch(r"[\d,.]+ ms", cells[-1]), (name, cells)
