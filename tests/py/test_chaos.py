"""The chaos test: random graphs (chips, sub-workers, groups, dependent and
disjoint views of shared buffers), each run with one random fault: a child
SIGKILLed, a task raising, or the Worker process SIGKILLed at a random moment.
Every run ends within a bound with the right bytes or an error naming the
failure, and leaves no process and no /dev/shm object behind
(tests/py/chaos.py; docs/reliability.md). 30 runs here; SIMPLER_CHAOS_RUNS=200
for the full count."""

import json
import os
import subprocess
import sys

CHAOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chaos.py")


def test_random_faults_end_in_the_right_bytes_or_a_named_error_and_leave_nothing():
    runs = int(os.environ.get("SIMPLER_CHAOS_RUNS", "30"))
    r = subprocess.run([sys.executable, CHAOS, "--runs", str(runs)], capture_output=True, text=True,
                       timeout=120 + 60 * runs)
    lines = r.stdout.strip().splitlines()
    assert lines, r.stderr
    summary = json.loads(lines[-1])
    assert r.returncode == 0 and summary["failed_checks"] == 0, "\n".join(lines[:-1]) + r.stderr[-4000:]
    assert summary["runs"] == runs
    assert summary["leaked_processes"] == 0 and summary["leaked_shm_objects"] == 0
