"""StarPU's own tiled Cholesky (`cholesky_implicit` from Debian's starpu-examples: FLOAT32, dependencies
inferred from data accesses, as this runtime's are) as a same-run baseline for bench_cholesky.py, on
the same OpenBLAS the chips' kernels call.

The example links the reference BLAS (`libblas.so.3`). A forwarding library of that name, built here
into a temporary folder, maps each BLAS name the example imports (`sgemm_`, `strsm_`, ...) to the
scipy-openblas32 wheel's prefixed one (`scipy_sgemm_`), so with that folder first on
LD_LIBRARY_PATH the example computes with the chips' OpenBLAS, one thread a worker. Each of its
`STARPU_NCPU` CPU workers takes a core; no CUDA or OpenCL worker is started."""

from __future__ import annotations

import atexit
import functools
import glob
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

# Level-1 BLAS functions return a value; every other BLAS routine is a subroutine.
_RETURNS = [(re.compile(r"i[sdcz]amax_$"), "int"), (re.compile(r"s(asum|dot|nrm2)_$"), "float"),
            (re.compile(r"d(asum|dot|nrm2)_$"), "double")]  # fmt: skip
_MAX_ARGS = 16  # Fortran BLAS takes every argument by address, plus a length per character argument


def example() -> Optional[str]:
    """The cholesky_implicit binary, or None when starpu-examples is not installed."""
    found = sorted(glob.glob("/usr/lib/*/starpu/examples/cholesky_implicit"))
    return found[0] if found else None


def _imported_blas(binary: str) -> list[str]:
    out = subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True, check=True)
    names = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
    return sorted(n for n in names if re.fullmatch(r"[a-z]+_", n) and not n.startswith("starpu"))


def blas_shim(blas: str, binary: str, folder: Path) -> Path:
    """Builds `folder`/libblas.so.3 forwarding the BLAS names `binary` imports to `blas` (the
    scipy-openblas32 library, whose names carry the `scipy_` prefix); returns the folder."""
    params = ", ".join(f"void* a{i}" for i in range(_MAX_ARGS))
    args = ", ".join(f"a{i}" for i in range(_MAX_ARGS))
    lines = []
    for name in _imported_blas(binary):
        kind = next((k for pattern, k in _RETURNS if pattern.match(name)), "void")
        ret = "" if kind == "void" else "return "
        lines.append(f"extern {kind} scipy_{name}({params});")
        lines.append(f"{kind} {name}({params}) {{ {ret}scipy_{name}({args}); }}")
    source = folder / "blas_shim.c"
    source.write_text("\n".join(lines) + "\n")
    lib = Path(blas)
    name = lib.name[3:].split(".so")[0]  # libscipy_openblas.so -> scipy_openblas
    cc = shutil.which(os.environ.get("CC", "cc")) or "cc"
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", str(source), "-o", str(folder / "libblas.so.3"), f"-L{lib.parent}",
         f"-l{name}", f"-Wl,-rpath,{lib.parent}", "-Wl,-soname,libblas.so.3"],
        check=True,
    )  # fmt: skip
    return folder


@functools.lru_cache(maxsize=None)
def _shim(blas: str, binary: str) -> Path:
    """The forwarding library's folder, built once a process (every n and tile reuse it); removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="starpu-blas-shim-"))
    atexit.register(shutil.rmtree, folder, True)
    return blas_shim(blas, binary, folder)


def gflops(n: int, tile: int, workers: int, repeats: int, blas: str) -> Optional[float]:
    """Median GFLOP/s (n³/3 over StarPU's own timing) of cholesky_implicit on an n x n FLOAT32
    matrix in n / tile blocks a side, `workers` CPU workers, after one warm-up run; None when the
    example is not installed or n is not a multiple of tile."""
    binary = example()
    if binary is None or n % tile:
        return None
    folder = _shim(blas, binary)
    with tempfile.TemporaryDirectory(prefix="starpu-cholesky-") as work:
        env = dict(
            os.environ,
            STARPU_NCPU=str(workers),
            STARPU_NCUDA="0",
            STARPU_NOPENCL="0",
            STARPU_SILENT="1",
            STARPU_HOME=work,  # its performance models go here, not into the user's home
            OPENBLAS_NUM_THREADS="1",
            LD_LIBRARY_PATH=os.pathsep.join([str(folder), os.environ.get("LD_LIBRARY_PATH", "")]),
        )
        rates = []
        for r in range(repeats + 1):
            out = subprocess.run(
                [binary, "-size", str(n), "-nblocks", str(n // tile)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=3600,
            ).stdout
            size, ms, _rate = out.strip().splitlines()[-1].split()
            if int(size) != n:
                raise SystemExit(f"starpu cholesky_implicit: asked for n = {n}, it reports {size}")
            if r:
                rates.append(n**3 / 3 / (float(ms) / 1e3) / 1e9)
        return statistics.median(rates)
