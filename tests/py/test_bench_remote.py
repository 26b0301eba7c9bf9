"""Smoke: the remote benchmarks (benchmarks/run_remote_bench.py --quick) run end to end under mpirun
--isolate, print both goals with a verdict, and the transfer task moves exactly its views' bytes
(64 MiB in, 64 MiB back: the output, in a write-only buffer, is not fetched). The driver runs in
its own mount namespace with a private /dev/shm, so "it is empty afterwards" is exactly "nothing of
the run leaked" on a shared machine; no process of the run outlives it."""

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from simpler import _core

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DRIVER = os.path.join(ROOT, "benchmarks", "run_remote_bench.py")
MPI_RAW = os.path.join(ROOT, "build", "py", "benchmarks", "mpi_raw")

pytestmark = pytest.mark.skipif(
    not _core.remote_available()
    or shutil.which("mpirun") is None
    or shutil.which("unshare") is None
    or os.geteuid() != 0
    or not os.access(MPI_RAW, os.X_OK),
    reason="needs simpler built with MPI, mpirun, unshare, root (--isolate) and build/py/benchmarks/mpi_raw",
)

# Runs "$@" on a private /dev/shm, then prints what is left on it.
PRIVATE_SHM = (
    'mount -t tmpfs -o size=1g simpler-test-shm /dev/shm || exit 125; "$@"; rc=$?; '
    'echo "SHM_LEFT:$(ls -A /dev/shm | tr "\\n" " ")"; exit $rc'
)


def processes_with(mark):
    """Pids of the processes whose environment holds `mark` (every process of the run inherits it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark.encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue  # gone, or not ours to read
    return found


def test_the_remote_benchmarks_run_and_move_only_the_views_bytes():
    cmd = [shutil.which("unshare") or "unshare", "-m", "sh", "-c", PRIVATE_SHM, "sh", sys.executable, DRIVER, "--quick"]
    mark = f"SIMPLER_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, mark.split("=")[0]: mark.split("=")[1]}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("| ")]
    goals = [ln for ln in rows if "met**" in ln]
    assert len(goals) == 2, p.stdout
    assert any("round trip" in ln and "<= 2x" in ln for ln in goals), p.stdout
    assert any("64 MiB fetched + 64 MiB written back" in ln and ">= 70 %" in ln for ln in goals), p.stdout
    raw = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("raw: "))[len("raw: ") :])
    simpler = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("simpler: "))[len("simpler: ") :])
    assert raw[0]["ping_bytes"] == 104 and raw[0]["pong_bytes"] == 32
    assert raw[0]["blocking_round_trip_us"] > 0 and raw[0]["blocking_gib_s"] > 0
    assert simpler[0]["bytes"] == 64 << 20
    assert simpler[0]["payload_sent"] == 64 << 20
    assert simpler[0]["payload_received"] == 64 << 20
    for key in ("empty_round_trip_us", "noop_chip_round_trip_us", "local_empty_round_trip_us", "transfer_gib_s"):
        assert simpler[0][key] > 0, key
    left = next(ln for ln in p.stdout.splitlines() if ln.startswith("SHM_LEFT:"))
    assert left.split(":", 1)[1].split() == [], left
    assert processes_with(mark) == []
