"""Tiled Cholesky on chips against LAPACK's potrf through NumPy, in GFLOP/s.

    .venv/bin/python benchmarks/bench_cholesky.py [--sizes 2048,4096] [--tiles 128,256,512]
        [--dtype float64] [--chips 2] [--repeats 3] [--plot docs/img/bench_cholesky.png] [--quick]

For each order n: an SPD matrix in one Buffer; for each tile size b, the
right-looking tiled Cholesky (std.potrf, std.trsm, std.syrk, std.gemm on tile
views of the Buffer; tile (i, j) on chip (i + j) mod chips) run `--repeats`
times on a Worker with `--chips` chips of one core thread each, zero-copy (the
kernels work on the Buffer's bytes in place), every run's input copied in
first (untimed) and the first result checked against NumPy. The baseline,
in the same run: `numpy.linalg.cholesky` of the same matrix in a child process
whose OpenBLAS has as many threads as the chips have cores (and once with one
thread, for the per-task figure). GFLOP/s = n³/3 / seconds, medians.

"the chips' potrf, 1 thread" is the OpenBLAS the chips' kernels call (Debian's
serial build: one thread) factorising the same matrix in one potrf call, in a
child (NumPy's LAPACK, a different OpenBLAS build, where the chips have none).
"non-compute per task" is (wall - n³/3 / (chips x that one-thread rate)) x
chips / tasks: the core time per task not spent computing at the one-thread
potrf's rate — the runtime's overhead and the DAG's idle cores together (an
upper bound on the runtime's own cost; negative where the tiles' kernels beat
one whole-matrix potrf call).

FLOAT32 only, when Debian's starpu-examples is installed (./dev bench installs it): StarPU's own
tiled Cholesky (`cholesky_implicit`, benchmarks/starpu_cholesky.py) at the same n and tile, with as
many CPU workers as chips, on the chips' OpenBLAS (one thread a worker), same run; the closing line
gives the ratio to it.

Prints a markdown table; with --plot, writes a PNG of GFLOP/s against tile size
(one line per n, LAPACK's figure dashed beside it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List

# This process's own NumPy BLAS (the reference factor, the test matrix) runs on one
# thread: a pool of OpenBLAS threads left spinning here would take cores from the
# chips. The baseline runs in a child with the threads it is measured with.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # benchmarks/plots.py
import starpu_cholesky  # benchmarks/starpu_cholesky.py
from simpler.runtime_libraries import wheel_blas_path

IN, INOUT = TensorArgType.INPUT, TensorArgType.INOUT
DTYPES = {"float32": (DataType.FLOAT32, np.float32), "float64": (DataType.FLOAT64, np.float64)}

BASELINE = r"""
import json, statistics, sys, time
import numpy as np
n, dtype, repeats = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(7)
g = rng.standard_normal((n, n))
a = (g @ g.T / n + np.eye(n)).astype(dtype)
np.linalg.cholesky(a)  # warm-up
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    np.linalg.cholesky(a)
    times.append(time.perf_counter() - t0)
print(json.dumps(statistics.median(times)))
"""


CHIPS_BLAS = r"""
import ctypes, json, statistics, sys, time
import numpy as np
import simpler
path, _ = simpler._core.blas_library()  # loads the BLAS the chips' kernels call, as they do
if path is None:
    print("null")
    raise SystemExit(0)
lib = ctypes.CDLL(path)
prefix = "scipy_" if hasattr(lib, "scipy_spotrf_") else ""  # the scipy-openblas wheels' symbols
n, dtype, repeats = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(7)
g = rng.standard_normal((n, n))
a = (g @ g.T / n + np.eye(n)).astype(dtype)
potrf = getattr(lib, prefix + ("dpotrf_" if dtype == "float64" else "spotrf_"))
uplo, order, info = ctypes.c_char(b"L"), ctypes.c_int(n), ctypes.c_int(0)
times = []
for r in range(repeats + 1):  # the first call is a warm-up
    f = np.asfortranarray(a)  # a fresh column-major copy, untimed
    t0 = time.perf_counter()
    potrf(ctypes.byref(uplo), ctypes.byref(order), f.ctypes.data_as(ctypes.c_void_p), ctypes.byref(order),
          ctypes.byref(info))
    elapsed = time.perf_counter() - t0
    if info.value != 0:
        raise SystemExit(f"potrf info {info.value}")
    if r:
        times.append(elapsed)
print(json.dumps(statistics.median(times)))
"""


def chips_blas_seconds(n: int, dtype: str, repeats: int):
    """Median seconds of the chips' own OpenBLAS's potrf (serial: one thread) on the same matrix, called
    directly in a child; None when the chips have no OpenBLAS (a build without it)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CHIPS_BLAS, str(n), dtype, str(repeats)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    ).stdout
    return json.loads(out)


def lapack_seconds(n: int, dtype: str, threads: int, repeats: int) -> float:
    """Median seconds of numpy.linalg.cholesky of an n x n SPD matrix, in a child whose BLAS has `threads`."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, "-c", BASELINE, str(n), dtype, str(repeats)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    ).stdout
    return float(json.loads(out))


def load_example():
    """examples/cholesky.py as a module: its ops() (the factorisation's tasks in submission order,
    with the tiles each reads and writes) and scalar_bits(), so the benchmark runs exactly the
    example's graph."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "cholesky.py")
    spec = importlib.util.spec_from_file_location("cholesky_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = load_example()


def factorise(
    w: Worker, kernels: Dict[str, object], buf, n: int, b: int, dtype: DataType, itemsize: int, chips: int
) -> int:
    """One tiled Cholesky of the n x n matrix in `buf`, in place (the example's tasks; tile (i, j)
    on chip (i + j) mod chips); returns how many tasks it submitted."""
    tasks = EXAMPLE.ops(n // b)
    gemm_scalars = (0, 1, EXAMPLE.scalar_bits(-1.0, dtype), EXAMPLE.scalar_bits(1.0, dtype))

    def tile(i: int, j: int):
        return buf.tensor((b, b), dtype, (n, 1), (i * b * n + j * b) * itemsize)

    def orch(o, _args, _cfg):
        for (name, i, j, _k), reads, writes in tasks:
            ta = TaskArgs()
            for r in reads:
                ta.add_tensor(tile(*r), IN)
            for wr in writes:
                ta.add_tensor(tile(*wr), INOUT)
            if name == "gemm":  # A_ij = A_ij - A_ik · A_jkᵀ
                for s in gemm_scalars:
                    ta.add_scalar(s)
            o.submit_next_level(kernels[name], ta, worker=(i + j) % chips)

    w.run(orch)
    return len(tasks)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="2048,4096", help="matrix orders, comma-separated")
    p.add_argument("--tiles", default="128,256,512", help="tile orders, comma-separated (each divides every n)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float64")
    p.add_argument("--chips", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--plot", help="write a PNG of GFLOP/s against tile size here")
    p.add_argument("--quick", action="store_true", help="a smoke run: n = 256, tiles 64 and 128, one repeat")
    opts = p.parse_args(argv)
    if opts.quick:
        opts.sizes, opts.tiles, opts.repeats = "256", "64,128", 1
    sizes = [int(x) for x in opts.sizes.split(",")]
    tiles = [int(x) for x in opts.tiles.split(",")]
    dtype, np_dtype = DTYPES[opts.dtype]
    itemsize = np.dtype(np_dtype).itemsize
    rows: List[dict] = []
    print(
        f"tiled Cholesky, {dtype.name}, {opts.chips} chips of one core thread, zero-copy; "
        f"LAPACK: numpy.linalg.cholesky with {opts.chips} OpenBLAS threads; medians of {opts.repeats}\n"
    )
    blas = wheel_blas_path()
    starpu = dtype == DataType.FLOAT32 and blas is not None and starpu_cholesky.example() is not None
    print(
        "| n | tile | tasks | simpler GFLOP/s | LAPACK GFLOP/s | ratio | the chips' potrf, 1 thread | "
        "non-compute per task |" + (" StarPU cholesky_implicit GFLOP/s |" if starpu else "")
    )
    print("|---|---|---|---|---|---|---|---|" + ("---|" if starpu else ""))
    with Worker(level=3, num_chips=opts.chips, chip_core_threads=1, zero_copy=True, task_timeout=3600) as w:
        kernels = {name: w.register(ChipCallable(f"std.{name}")) for name in ("potrf", "trsm", "syrk", "gemm")}
        w.init()
        for n in sizes:
            flops = n**3 / 3
            base = lapack_seconds(n, opts.dtype, opts.chips, opts.repeats)
            serial = chips_blas_seconds(n, opts.dtype, opts.repeats)
            base_one = serial if serial is not None else lapack_seconds(n, opts.dtype, 1, opts.repeats)
            rng = np.random.default_rng(7)
            g = rng.standard_normal((n, n))
            a = (g @ g.T / n + np.eye(n)).astype(np_dtype)
            reference = np.linalg.cholesky(a.astype(np.float64))
            buf = w.create_buffer(n * n * itemsize)
            view = buf.array((n, n), dtype)
            for b in tiles:
                if n % b:
                    continue
                times = []
                tasks = 0
                for r in range(opts.repeats + 1):  # the first run is a warm-up, checked
                    view[...] = a
                    t0 = time.perf_counter()
                    tasks = factorise(w, kernels, buf, n, b, dtype, itemsize, opts.chips)
                    elapsed = time.perf_counter() - t0
                    if r == 0:
                        error = float(np.abs(np.tril(view) - reference).max() / np.abs(reference).max())
                        if error > (1e-10 if dtype == DataType.FLOAT64 else 1e-3):
                            raise SystemExit(f"n {n}, tile {b}: the factor differs from NumPy's by {error:.2e}")
                    else:
                        times.append(elapsed)
                wall = statistics.median(times)
                ideal = flops / (opts.chips * (flops / base_one))
                per_task = (wall - ideal) * opts.chips / tasks
                row = {
                    "n": n,
                    "tile": b,
                    "tasks": tasks,
                    "gflops": flops / wall / 1e9,
                    "lapack": flops / base / 1e9,
                    "serial": flops / base_one / 1e9,
                    "per_task_us": per_task * 1e6,
                    "starpu": starpu_cholesky.gflops(n, b, opts.chips, opts.repeats, blas) if starpu else None,
                }
                rows.append(row)
                print(
                    f"| {n} | {b} | {tasks} | {row['gflops']:.2f} | {row['lapack']:.2f} | "
                    f"{row['gflops'] / row['lapack']:.2f}x | {row['serial']:.2f} | {row['per_task_us']:.0f} µs |"
                    + (f" {row['starpu']:.2f} |" if starpu else ""),
                    flush=True,
                )
            del view  # the array exports the Buffer's bytes: let go before closing it
            buf.close()
    for n in sizes:
        mine = [r for r in rows if r["n"] == n]
        if mine:
            best = max(mine, key=lambda r: r["gflops"])
            print(
                f"\nn = {n}: best tile {best['tile']}, {best['gflops']:.2f} GFLOP/s = "
                f"{best['gflops'] / best['lapack']:.2f}x LAPACK ({best['lapack']:.2f})"
            )
            theirs = [r for r in mine if r["starpu"] is not None]
            if theirs:
                top = max(theirs, key=lambda r: r["starpu"])
                print(
                    f"n = {n}: StarPU cholesky_implicit's best, tile {top['tile']}: {top['starpu']:.2f} GFLOP/s; "
                    f"simpler's best is {best['gflops'] / top['starpu']:.2f}x it"
                )
    if opts.plot:
        plot(rows, sizes, dtype, opts.chips, opts.plot)
        print(f"\nplot: {opts.plot}")
    return 0


def plot(rows: List[dict], sizes: List[int], dtype: DataType, chips: int, path: str) -> None:
    fig, ax = plots.new_figure()
    for k, n in enumerate(sizes):
        mine = [r for r in rows if r["n"] == n]
        if not mine:
            continue
        colour = f"C{k}"
        ax.plot([r["tile"] for r in mine], [r["gflops"] for r in mine], "o-", color=colour, label=f"simpler, n={n}")
        ax.axhline(
            mine[0]["lapack"],
            color=colour,
            linestyle="--",
            linewidth=1,
            label=f"NumPy's LAPACK, {chips} threads, n={n}",
        )
        ax.axhline(
            mine[0]["serial"], color=colour, linestyle=":", linewidth=1, label=f"the chips' potrf, 1 thread, n={n}"
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tile order")
    ax.set_ylabel("GFLOP/s (n³/3 / s)")
    ax.set_title(f"Tiled Cholesky, {dtype.name}, on {chips} chips of one core thread")
    ax.set_ylim(bottom=0)
    plots.save_figure(fig, ax, path, ncol=3, loc="lower center")


if __name__ == "__main__":
    raise SystemExit(main())
