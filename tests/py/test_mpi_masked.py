"""MPI is loaded at run time, only for remote Workers (docs/internals/remote.md): with Open MPI hidden (a
private mount namespace deletes its libraries from an overlay of the library folder) `import
simpler` and a Worker with a chip work, and remote use fails at once with a clear error naming the
library that did not load, why, and how to get MPI: `Worker.add_remote_workers` and `python -m
simpler launch`. (tests/py/test_remote.py runs the remote Workers with MPI present.)"""

import json
import subprocess
import sys

import pytest

from mpi_masking import masked, why_not_maskable

pytestmark = pytest.mark.skipif(why_not_maskable() is not None, reason=str(why_not_maskable()))

SCRIPT = r"""
import ctypes, json
import numpy as np
from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

out = {}
try:
    ctypes.CDLL("libmpi.so.40")
    out["mpi_visible"] = True
except OSError:
    out["mpi_visible"] = False
with Worker(level=3, num_chips=1) as w:
    add = w.register(ChipCallable("std.vector_add"))
    x = w.alloc_shared_tensor((64,), DataType.FLOAT32)
    y = w.alloc_shared_tensor((64,), DataType.FLOAT32)
    w.init()
    x.array()[:] = np.arange(64, dtype=np.float32)

    def orch(o, _a, _c):
        ta = TaskArgs()
        ta.add_tensor(x.tensor(), TensorArgType.INPUT)
        ta.add_tensor(x.tensor(), TensorArgType.INPUT)
        ta.add_tensor(y.tensor(), TensorArgType.OUTPUT_EXISTING)
        o.submit_next_level(add, ta, None, worker=0)

    w.run(orch)
    out["chip_ok"] = bool((y.array() == 2 * np.arange(64, dtype=np.float32)).all())
top = Worker(level=4)
try:
    top.add_remote_workers(1, num_chips=1)
    out["remote"] = None
except RuntimeError as e:
    out["remote"] = str(e)
top.close()
print(json.dumps(out))
"""


def run_masked(cmd, tmp_path):
    work = tmp_path / "mask"
    work.mkdir()
    return subprocess.run(masked(cmd, work), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_without_mpi_a_chip_runs_and_add_remote_workers_fails_naming_the_missing_library(tmp_path):
    r = run_masked([sys.executable, "-c", SCRIPT], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["mpi_visible"] is False
    assert out["chip_ok"] is True
    why = out["remote"]
    assert why is not None, "add_remote_workers did not fail without MPI"
    assert why.startswith("Worker.add_remote_workers: remote: MPI could not be loaded: "), why
    assert "libmpi.so.40 did not load: libmpi.so.40: cannot open shared object file" in why, why
    assert "apt install openmpi-bin" in why and "LD_LIBRARY_PATH" in why and "SIMPLER_MPI_LIBRARY" in why, why


def test_without_mpi_the_launcher_fails_before_mpirun_naming_the_missing_library(tmp_path):
    program = tmp_path / "never_run.py"
    program.write_text("raise SystemExit('the program ran')\n")
    r = run_masked([sys.executable, "-m", "simpler", "launch", "-n", "2", str(program)], tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("python -m simpler launch: remote: MPI could not be loaded: "), r.stderr
    assert "libmpi.so.40: cannot open shared object file" in r.stderr
    assert "the program ran" not in r.stderr
