"""The BLAS the standard chip kernels call is found at run time, never linked
(docs/internals/chip.md): the package registers the scipy-openblas32 wheel's library at
import; SIMPLER_BLAS overrides it (another library, or none for the portable
loops); a library that does not load fails every BLAS kernel naming it; and a
chip runs it serially, on its own core threads (no OpenBLAS thread pool)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from simpler.runtime_libraries import wheel_blas_path
from worker_helpers import args, closing  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 32


def blas_in_a_fresh_process(**env):
    base = {k: v for k, v in os.environ.items() if k != "SIMPLER_BLAS"}
    code = "import json, simpler; print(json.dumps(simpler._core.blas_library()))"
    out = subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, check=True, capture_output=True, text=True, timeout=60
    )
    return json.loads(out.stdout)


def test_the_package_registers_the_scipy_openblas32_wheels_library():
    path = wheel_blas_path()
    assert path is not None, "scipy-openblas32 is a dependency of the package: pip install scipy-openblas32"
    assert path.name == "libscipy_openblas.so" and path.is_file()
    assert blas_in_a_fresh_process() == [str(path), None]


def test_simpler_blas_overrides_the_registered_library():
    assert blas_in_a_fresh_process(SIMPLER_BLAS="none") == [None, None]
    path, error = blas_in_a_fresh_process(SIMPLER_BLAS="/nonexistent/libblas.so")
    assert path is None
    assert error.startswith("SIMPLER_BLAS=/nonexistent/libblas.so did not load: /nonexistent/libblas.so: cannot open")


def matmul_worker(closing):
    w = Worker(level=3, num_chips=1, task_timeout=30)
    closing(w)
    mm = w.register(ChipCallable("std.matmul"))
    w.init()
    bufs = [w.create_buffer(N * N * 4) for _ in range(3)]
    a, b, c = (view_array(buf.tensor((N, N), F32)) for buf in bufs)
    rng = np.random.default_rng(3)
    a[...] = rng.standard_normal((N, N), dtype=np.float32)
    b[...] = rng.standard_normal((N, N), dtype=np.float32)
    c[...] = -1

    def run():
        w.run(
            lambda o, _a, _c: o.submit_next_level(
                mm,
                args(*((buf.tensor((N, N), F32), tag) for buf, tag in zip(bufs, (IN, IN, OUT), strict=True))),
                worker=0,
            )
        )

    return w, run, a, b, c


def test_a_library_that_does_not_load_fails_the_kernel_naming_it_and_writes_nothing(closing, monkeypatch):
    monkeypatch.setenv("SIMPLER_BLAS", "/nonexistent/libblas.so")
    _, run, _, _, c = matmul_worker(closing)
    with pytest.raises(
        RuntimeError,
        match=r"std\.matmul: SIMPLER_BLAS=/nonexistent/libblas\.so did not load: "
        r"/nonexistent/libblas\.so: cannot open shared object file",
    ):
        run()
    assert (c == -1).all()


# Runs in a fresh interpreter: a process that has loaded this OpenBLAS itself (import scipy_openblas32
# does) hands it to the chips it forks, and OpenBLAS restarts its pool there (docs/internals/chip.md).
THREADS = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import numpy as np
from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from worker_helpers import args

IN, OUT, F32, N = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, DataType.FLOAT32, 32
with Worker(level=3, num_chips=1, task_timeout=30) as w:
    mm, cp = w.register(ChipCallable("std.matmul")), w.register(ChipCallable("std.copy"))
    w.init()
    bufs = [w.create_buffer(N * N * 4) for _ in range(3)]
    a, b, c = (view_array(buf.tensor((N, N), F32)) for buf in bufs)
    a[...], b[...] = np.arange(N * N).reshape(N, N) % 7, np.arange(N * N).reshape(N, N) % 5
    (pid,) = w.child_pids()

    def run(fn, pairs):
        tensors = ((x.tensor((N, N), F32), t) for x, t in pairs)
        w.run(lambda o, _a, _c: o.submit_next_level(fn, args(*tensors), worker=0))

    threads = lambda: len(os.listdir(f"/proc/{pid}/task"))
    run(cp, ((bufs[0], IN), (bufs[2], OUT)))  # no BLAS first: after a run the chip's core threads all exist
    before = threads()
    run(mm, ((bufs[0], IN), (bufs[1], IN), (bufs[2], OUT)))  # the first BLAS kernel loads the library
    ok = bool((c == a.astype(np.float64) @ b.astype(np.float64)).all())
    loaded = "libscipy_openblas.so" in Path(f"/proc/{pid}/maps").read_text()
    print(before, threads(), ok, loaded)
    del a, b, c
    for buf in bufs:
        buf.close()
"""


@pytest.mark.skipif(os.cpu_count() == 1, reason="OpenBLAS starts no pool on one CPU: nothing to tell apart")
def test_a_chip_runs_the_blas_on_its_own_core_threads():
    # OpenBLAS would start a pool of cpu_count - 1 threads as it loads; the chip sets it to one.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "SIMPLER_BLAS")}
    out = subprocess.run(
        [sys.executable, "-c", THREADS, str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    before, after, ok, loaded = out.stdout.split()
    assert ok == "True", "the chip's std.matmul computed a wrong product"
    assert loaded == "True", "the chip did not load the wheel's BLAS"
    assert after == before, f"the chip had {before} threads before its first BLAS kernel and {after} after"
