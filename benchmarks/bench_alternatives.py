"""simpler against what users would pick instead, measured side by side.

    .venv/bin/python benchmarks/bench_alternatives.py [--rounds 5] [--quick] [--systems a,b,...]

Four workloads, each on every system that can be imported here (a system that cannot is skipped
with a line saying why; the benchmark needs only the project's own dependencies):

  1. round trip: one empty task submitted and waited for, repeated; the median of per-call times;
  2. independent: N empty tasks submitted together, waited for together; tasks/s;
  3. chain: N tasks, each taking the previous one's output (x -> x + 1 from 0); tasks/s, and the
     final value must be N;
  4. 64 MiB: 64 MiB of float32 from a NumPy array in the driver into the system's idiomatic
     shared / zero-copy container, one task that adds 1 to every element, and the result readable
     in the driver; the bytes are checked against NumPy.

Systems (each with 2 workers, default settings otherwise):
  - simpler, 2 sub-workers (Python callables): Worker(level=3, num_sub_workers=2);
  - simpler, 2 simulated chips: std.noop, std.add_scalar (a chain of x -> y -> x, +1 each);
    64 MiB staged (copied into the chip's memory and back) and zero-copy (CallConfig(zero_copy=True));
  - multiprocessing.Pool(2) (fork): apply_async; arguments and results pickled through pipes;
  - torch.multiprocessing: 2 worker processes serving a torch Queue; tensors made shared
    (share_memory_()) before the workers start, so a message names them and never carries them;
  - Dask: dask.distributed LocalCluster(n_workers=2, threads_per_worker=1, processes=True), futures
    (client.submit / client.map / client.scatter); without distributed, dask's multiprocessing
    scheduler (dask.delayed, scheduler="processes", num_workers=2);
  - Ray: ray.init(num_cpus=2), remote functions, ObjectRefs; 64 MiB by ray.put of the array (one
    copy into the object store; the task reads it zero-copy) and the task returning a new array,
    which ray.get maps zero-copy.

Every figure is the median over --rounds rounds (each round after one warm-up). Dask runs fewer
calls / tasks per round (it takes seconds per thousand); every cell says its size.
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import multiprocessing as mp
import os
import statistics
import sys
import time
import warnings
from typing import Any, Callable, Optional

import numpy as np

from alternatives_base import MIB, Skipped, System, check_big, source_array
from alternatives_simpler import SimplerChip, SimplerSub


# -- task bodies (module level: picklable by every system) -------------------------------------
def noop(*_a: Any) -> None:
    return None


def inc(x: int) -> int:
    return x + 1


def add_one(a: np.ndarray) -> np.ndarray:
    return a + np.float32(1.0)


# -- multiprocessing.Pool ----------------------------------------------------------------------
class PoolSystem(System):
    name = "multiprocessing.Pool(2)"

    def open(self) -> None:
        self.pool = mp.get_context("fork").Pool(2)

    def close(self) -> None:
        self.pool.close()
        self.pool.join()

    def one(self) -> None:
        self.pool.apply_async(noop).get()

    def independent_s(self, n: int) -> float:
        t0 = time.perf_counter()
        rs = [self.pool.apply_async(noop) for _ in range(n)]
        for r in rs:
            r.get()
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        t0 = time.perf_counter()
        x = 0
        for _ in range(n):  # a Pool has no futures-as-arguments: the driver carries each value
            x = self.pool.apply_async(inc, (x,)).get()
        dt = time.perf_counter() - t0
        if x != n:
            raise AssertionError(f"chain ended at {x}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        t0 = time.perf_counter()
        result = self.pool.apply_async(add_one, (src,)).get()
        dt = time.perf_counter() - t0
        check_big(result, src)
        return dt


# -- torch.multiprocessing ---------------------------------------------------------------------
def _torch_serve(tasks: Any, done: Any, cnt: Any, big: Any) -> None:
    import torch

    torch.set_num_threads(1)
    while True:
        m = tasks.get()
        if m is None:
            return
        op, tag = m
        if op == "inc":
            cnt += 1
        elif op == "add":
            big += 1.0
        done.put(tag)


class TorchSystem(System):
    name = "torch.multiprocessing"

    def __init__(self, big_nbytes: int):
        self.big_nbytes = big_nbytes

    def open(self) -> None:
        try:
            import torch
            import torch.multiprocessing as tmp
        except ImportError as e:
            raise Skipped(f"torch not importable ({e})") from e
        self.torch = torch
        ctx = tmp.get_context("fork")
        self.tasks, self.done = ctx.Queue(), ctx.Queue()
        self.cnt = torch.zeros(1, dtype=torch.int64).share_memory_()
        self.big = torch.empty(self.big_nbytes // 4, dtype=torch.float32).share_memory_()
        self.procs = [
            ctx.Process(target=_torch_serve, args=(self.tasks, self.done, self.cnt, self.big)) for _ in range(2)
        ]
        for p in self.procs:
            p.start()

    def close(self) -> None:
        for _ in self.procs:
            self.tasks.put(None)
        for p in self.procs:
            p.join(10)

    def one(self) -> None:
        self.tasks.put(("noop", 0))
        self.done.get()

    def independent_s(self, n: int) -> float:
        t0 = time.perf_counter()
        for i in range(n):
            self.tasks.put(("noop", i))
        for _ in range(n):
            self.done.get()
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        self.cnt.zero_()
        t0 = time.perf_counter()
        for i in range(n):  # the driver orders the chain: the next task goes once the last is back
            self.tasks.put(("inc", i))
            self.done.get()
        dt = time.perf_counter() - t0
        if int(self.cnt[0]) != n:
            raise AssertionError(f"chain ended at {int(self.cnt[0])}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        t0 = time.perf_counter()
        self.big.copy_(self.torch.from_numpy(src))
        self.tasks.put(("add", 0))
        self.done.get()
        result = self.big.numpy()
        dt = time.perf_counter() - t0
        check_big(result, src)
        return dt


# -- Dask --------------------------------------------------------------------------------------
class DaskDistributed(System):
    name = "Dask distributed, 2 procs"

    def open(self) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:
            raise Skipped(f"dask.distributed not importable ({e})") from e
        self.cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
        self.client = Client(self.cluster)

    def close(self) -> None:
        self.client.close()
        self.cluster.close()

    def one(self) -> None:
        self.client.submit(noop, pure=False).result()

    def independent_s(self, n: int) -> float:
        t0 = time.perf_counter()
        futs = self.client.map(noop, range(n), pure=False)
        self.client.gather(futs)
        dt = time.perf_counter() - t0
        del futs
        return dt

    def chain_s(self, n: int) -> float:
        t0 = time.perf_counter()
        f = self.client.submit(inc, 0, pure=False)
        for _ in range(n - 1):
            f = self.client.submit(inc, f, pure=False)
        x = f.result()
        dt = time.perf_counter() - t0
        if x != n:
            raise AssertionError(f"chain ended at {x}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        t0 = time.perf_counter()
        fin = self.client.scatter(src, direct=True)
        fout = self.client.submit(add_one, fin, pure=False)
        result = fout.result()
        dt = time.perf_counter() - t0
        check_big(result, src)
        del fin, fout
        return dt


class DaskProcesses(System):
    name = "Dask, multiprocessing scheduler"

    def open(self) -> None:
        try:
            import dask
        except ImportError as e:
            raise Skipped(f"dask not importable ({e})") from e
        self.dask = dask

    def _compute(self, *objs: Any) -> Any:
        return self.dask.compute(*objs, scheduler="processes", num_workers=2)

    def one(self) -> None:
        self._compute(self.dask.delayed(noop, pure=False)())

    def independent_s(self, n: int) -> float:
        d = self.dask.delayed(noop, pure=False)
        t0 = time.perf_counter()
        self._compute(*[d(i) for i in range(n)])
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        d = self.dask.delayed(inc, pure=False)
        t0 = time.perf_counter()
        x = 0
        for _ in range(n):
            x = d(x)
        (x,) = self._compute(x)
        dt = time.perf_counter() - t0
        if x != n:
            raise AssertionError(f"chain ended at {x}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        t0 = time.perf_counter()
        (result,) = self._compute(self.dask.delayed(add_one, pure=False)(src))
        dt = time.perf_counter() - t0
        check_big(result, src)
        return dt


# -- Ray ---------------------------------------------------------------------------------------
class RaySystem(System):
    name = "Ray, num_cpus=2"

    def __init__(self, big_nbytes: int):
        self.big_nbytes = big_nbytes

    def open(self) -> None:
        try:
            import ray
        except ImportError as e:
            raise Skipped(f"ray not importable ({e})") from e
        self.ray = ray
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            object_store_memory=max(256 * MIB, 8 * self.big_nbytes),
        )
        self.r_noop = ray.remote(noop)
        self.r_inc = ray.remote(inc)
        self.r_add = ray.remote(add_one)

    def close(self) -> None:
        self.ray.shutdown()

    def one(self) -> None:
        self.ray.get(self.r_noop.remote())

    def independent_s(self, n: int) -> float:
        t0 = time.perf_counter()
        self.ray.get([self.r_noop.remote() for _ in range(n)])
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        t0 = time.perf_counter()
        r = self.r_inc.remote(0)
        for _ in range(n - 1):
            r = self.r_inc.remote(r)  # an ObjectRef as the argument: Ray orders the chain
        x = self.ray.get(r)
        dt = time.perf_counter() - t0
        if x != n:
            raise AssertionError(f"chain ended at {x}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        t0 = time.perf_counter()
        ref = self.ray.put(src)
        out = self.r_add.remote(ref)
        result = self.ray.get(out)
        dt = time.perf_counter() - t0
        check_big(result, src)
        del ref, out, result
        return dt


# -- driver ------------------------------------------------------------------------------------
WORKLOADS = ("round trip", "independent", "chain", "64 MiB")


def measure(
    sys_: System, sizes: dict[str, int], rounds: int, src: np.ndarray, workloads: tuple[str, ...]
) -> dict[str, str]:
    cells: dict[str, str] = {}
    for wl in workloads:
        size = sizes.get(wl, 0)
        try:
            fn: Callable[[], float]
            if wl == "round trip":
                fn = functools.partial(sys_.round_trip_us, size)
            elif wl == "independent":
                fn = functools.partial(sys_.independent_s, size)
            elif wl == "chain":
                fn = functools.partial(sys_.chain_s, size)
            else:
                fn = functools.partial(sys_.big_s, src)
            fn()  # warm-up
            v = statistics.median(fn() for _ in range(rounds))
        except NotImplementedError:
            cells[wl] = "—"
            continue
        if wl == "round trip":
            cells[wl] = f"{v:,.1f} µs (median of {size:,} calls)"
        elif wl in ("independent", "chain"):
            cells[wl] = f"{size / v:,.0f} tasks/s ({v:.3f} s for {size:,})"
        else:
            cells[wl] = f"{v * 1e3:,.1f} ms"
        print(f"  {sys_.name}: {wl}: {cells[wl]}", file=sys.stderr, flush=True)
        gc.collect()
    return cells


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 rounds (a smoke run)")
    ap.add_argument(
        "--systems", default="", help="comma-separated subset of: simpler,chip,pool,torch,dask,ray (default: all)"
    )
    a = ap.parse_args(argv)
    rounds = 2 if a.quick else a.rounds
    big = 4 * MIB if a.quick else 64 * MIB
    fast = {"round trip": 1000, "independent": 20000, "chain": 5000}
    slow = {"round trip": 200, "independent": 5000, "chain": 2000}  # Dask: seconds per thousand
    if a.quick:
        fast = {"round trip": 100, "independent": 500, "chain": 200}
        slow = {"round trip": 20, "independent": 100, "chain": 50}
    src = source_array(big)
    makers: list[tuple[str, Callable[[], System], dict[str, int], tuple[str, ...]]] = [
        ("simpler", lambda: SimplerSub(big), fast, WORKLOADS),
        ("chip", lambda: SimplerChip(big), fast, WORKLOADS),
        ("chip", lambda: _named(SimplerChip(big, zero_copy=True), "simpler, 2 chips, zero-copy"), fast, ("64 MiB",)),
        ("pool", PoolSystem, fast, WORKLOADS),
        ("torch", lambda: TorchSystem(big), fast, WORKLOADS),
        ("dask", _dask_system, slow, WORKLOADS),
        ("ray", lambda: RaySystem(big), fast, WORKLOADS),
    ]
    wanted = set(filter(None, a.systems.split(","))) or {m[0] for m in makers}
    rows: list[tuple[str, dict[str, str]]] = []
    skipped: list[str] = []
    for key, make, sizes, workloads in makers:
        if key not in wanted:
            continue
        s = make()
        try:
            s.open()
        except Skipped as e:
            line = f"{s.name}: skipped, {e}"
            skipped.append(line)
            print(f"  {line}", file=sys.stderr, flush=True)
            continue
        except Exception as e:  # an alternative that imports but cannot start here: say why, go on
            if key in ("simpler", "chip"):
                raise
            line = f"{s.name}: skipped, could not start ({type(e).__name__}: {e})"
            skipped.append(line)
            print(f"  {line}", file=sys.stderr, flush=True)
            continue
        try:
            rows.append((s.name, measure(s, sizes, rounds, src, workloads)))
        finally:
            s.close()
            gc.collect()

    load = os.getloadavg()
    label = "64 MiB" if not a.quick else f"{big // MIB} MiB"
    print(
        f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores); "
        f"medians of {rounds} rounds after a warm-up; 2 workers per system\n"
    )
    print(f"| system | round trip, empty task | independent empty tasks | chain (x -> x+1) | {label} in, +1, out |")
    print("|---|---|---|---|---|")
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells.get(w, "—") for w in WORKLOADS) + " |")
    for line in skipped:
        print(f"\n{line}")
    return 0


def _named(s: System, name: str) -> System:
    s.name = name
    return s


def _dask_system() -> System:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return DaskProcesses()
    return DaskDistributed()


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    sys.exit(main())
