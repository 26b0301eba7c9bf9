"""Task Bench's METG(50%) measured on simpler: the smallest task a configuration runs efficiently.

The method of Task Bench (Slaughter et al., SC'20), implemented here: a graph of `width` x
`steps` point tasks whose dependencies follow a pattern (trivial, stencil_1d, nearest, spread,
fft, tree, all_to_all); each task runs a compute-bound kernel of `iterations` iterations
(64 FLOP each; `--kind memory`: a pass over a 512 KiB array each) and checks that it read exactly
its dependencies' outputs of the step before, so a missing edge fails the run (the chip library:
metg_kernels.cpp). Dependencies come from the tasks' views and tags alone.

Efficiency = achieved FLOP/s / peak FLOP/s, the peak being the serial baseline's rate (every
point's kernel in order on one core, in the same run, at the largest grain) times the cores.
Task granularity = wall time x cores / tasks. The iterations halve from `--iterations` until the
efficiency falls below `--floor`; METG(50%) is the smallest granularity that still reaches 50 %,
interpolated (in log granularity) towards the next smaller one.

Configurations:
  chip   one chip of 2 core threads; the whole graph in one chip orchestration (metg.graph)
  chips  2 chips of one core thread each; every point task submitted from the Python host
         (metg.point), point x on chip x mod 2; a point whose producers still run on the other
         chip waits in the host until their results are collected (the default)
  chips_cross
         as chips, with Worker(chip_conditions=True): such a point goes to its chip at once and
         waits for them there, on the lane board
  subs   2 Python sub-workers; every point task submitted from the Python host, each running the
         same kernel (metg_work, through ctypes) after the same check, in Python
  tree   L4 -> L3 -> chip: every point task submitted from a level-4 Worker's Python host, point x
         to level-3 child x mod 2 (2 children of one chip of one core thread each), whose
         orchestration runs metg.point on its chip: each point crosses one forwarding hop more
         than `chips`. Two children, not one with 2 chips: a child runs one task of its parent at
         a time (each is one run of the child), so one child would run a step's points in turn
  remote as tree, the level-3 children remote Workers on MPI ranks 1 and 2; under the launcher,
         first in --configs (ranks 1 and 2 serve the children and exit when they close; rank 0
         goes on with the rest):
         python -m simpler launch -n 3 --isolate benchmarks/metg/bench_metg.py --configs remote,chips
         (the serial baseline, when remote is first, runs through the tree on child 0's chip)

    python benchmarks/metg/bench_metg.py [--configs chip,chips,subs] [--patterns stencil_1d,...]
        [--width 2] [--steps 1000] [--host-steps 200] [--repeats 3] [--plot docs/img/bench_metg.png]
"""

import argparse
import ctypes
import math
import os
import statistics
import sys
import time
from typing import Dict, List, Optional, Tuple

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import plots  # benchmarks/plots.py

PATTERNS = ("trivial", "stencil_1d", "nearest", "spread", "fft", "tree", "all_to_all")
KINDS = {"compute": 0, "memory": 1}
FLOP_PER_ITERATION = {"compute": 64, "memory": 2 << 16}
LARGEST_GRAIN = {"compute": 1 << 15, "memory": 1 << 6}  # iterations: ~0.3 ms and ~2 ms a task here
ROW = 8  # doubles a row, as metg_kernels.cpp's ROW
CORES = 2
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metg_kernels.cpp")
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def deps(pattern: str, t: int, x: int, width: int) -> List[int]:
    """The points of step t - 1 that point (t, x) reads, as metg_kernels.cpp's deps()."""
    if t == 0:
        return []
    if pattern == "trivial":
        out: List[int] = []
    elif pattern == "stencil_1d":
        out = [x - 1, x, x + 1]
    elif pattern == "nearest":
        out = list(range(x - 2, x + 3))
    elif pattern == "spread":
        out = [(x + i * ((width + 2) // 3)) % width for i in range(3)]
    elif pattern == "fft":
        levels = 0
        while (2 << levels) <= width:
            levels += 1
        out = [x] + ([x ^ (1 << ((t - 1) % levels))] if levels else [])
    elif pattern == "tree":
        out = [x // 2]
    else:
        out = list(range(width))
    return sorted({d for d in out if 0 <= d < width})


_LIBRARY = {"path": "", "lib": None}  # the built chip library, for sub-workers (set before they fork)


def sub_point(args) -> None:
    """A point task on a Python sub-worker: metg_kernels.cpp's metg_point, in Python."""
    t, x, width, pattern, iterations, kind = args.scalars
    want = deps(PATTERNS[pattern], t, x, width)
    if len(args) != len(want) + 1:
        raise RuntimeError(f"sub_point ({t}, {x}): {len(args) - 1} inputs, the pattern names {len(want)}")
    seed = 0.0
    for i, d in enumerate(want):
        row = args.array(i + 1)[0]
        if row[0] != t - 1 or row[1] != d:
            raise RuntimeError(
                f"sub_point ({t}, {x}): input {i} holds ({row[0]:g}, {row[1]:g}), not ({t - 1}, {d}): a missing edge"
            )
        seed += row[2] * 1e-9
    if _LIBRARY["lib"] is None:
        lib = ctypes.CDLL(_LIBRARY["path"])
        lib.metg_work.restype = ctypes.c_double
        lib.metg_work.argtypes = (ctypes.c_uint64, ctypes.c_uint64, ctypes.c_double)
        _LIBRARY["lib"] = lib
    out = args.array(0)[0]
    out[2] = _LIBRARY["lib"].metg_work(kind, iterations, seed)
    out[0], out[1] = t, x


_TREE: Dict[str, object] = {}  # the L4's chip handles, set before its init() forks the L3 child


def tree_point(orch, args, _cfg) -> None:
    """A point task of the L4, run as one run of an L3 child: metg.point on its chip."""
    orch.submit_next_level(_TREE["point"], args, worker=0)


def tree_serial(orch, args, _cfg) -> None:
    """The serial baseline through the tree: metg.serial on the chip of an L3 child."""
    orch.submit_next_level(_TREE["serial"], args, worker=0)


class Bench:
    def __init__(self, config: str, width: int, kind: str, core_threads: int = 0, spin: Optional[float] = None) -> None:
        chips = 1 if config in ("chip", "subs") else 2
        self.config, self.width, self.kind = config, width, kind
        lib = ChipCallable.from_source(SOURCE, "metg.point", flags=["-O2"])
        _LIBRARY["path"] = lib.library
        if config in ("tree", "remote"):
            self._tree(lib, spin, config == "remote")
            return
        self.w = Worker(
            level=3,
            num_chips=chips,
            chip_core_threads=core_threads or CORES // chips,
            zero_copy=True,
            num_sub_workers=CORES if config == "subs" else 0,
            chip_conditions=config == "chips_cross",
            task_timeout=3600,
            spin=spin,
        )
        self.point = self.w.register(lib)
        self.sub = self.w.register(sub_point)
        self.graph = self.w.register(ChipCallable.from_library(lib.library, "metg.graph"))
        self.serial = self.w.register(ChipCallable.from_library(lib.library, "metg.serial"))
        self.w.init()
        self._rows()

    def _tree(self, lib: ChipCallable, spin: Optional[float], remote: bool) -> None:
        """The tree configurations: an L4 with 2 L3 children (local, or on MPI ranks 1 and 2) of one
        chip of one core thread each."""
        self.w = Worker(level=4, task_timeout=3600, spin=spin)
        child = {"num_chips": 1, "chip_core_threads": 1, "zero_copy": True, "task_timeout": 3600, "spin": spin}
        if remote:
            self.w.add_remote_workers(CORES, **child)
        else:
            for _ in range(CORES):
                self.w.add_worker(Worker(level=3, **child))
        _TREE["point"] = self.w.register(lib)
        _TREE["serial"] = self.w.register(ChipCallable.from_library(lib.library, "metg.serial"))
        self.point = self.w.register(tree_point)
        self.serial = self.w.register(tree_serial)
        self.w.init()
        self._rows()

    def _rows(self) -> None:
        width = self.width
        self.buf = self.w.create_buffer(2 * width * ROW * 8)
        self.rows = [
            [self.buf.tensor((1, ROW), DataType.FLOAT64, (ROW, 1), ((g * width + x) * ROW) * 8) for x in range(width)]
            for g in range(2)
        ]

    def close(self) -> None:
        self.buf.close()
        self.w.close()

    def _scalars(self, ta: TaskArgs, values) -> TaskArgs:
        for v in values:
            ta.add_scalar(int(v))
        return ta

    def run_graph(self, pattern: str, steps: int, iterations: int) -> float:
        """Seconds for one run of the graph, the way this configuration runs it."""
        p, kind = PATTERNS.index(pattern), KINDS[self.kind]
        width = self.width

        def on_chip(o, _a, _c):
            ta = TaskArgs()
            ta.add_tensor(self.buf.tensor((2 * width, ROW), DataType.FLOAT64), TensorArgType.INOUT)
            o.submit_next_level(self.graph, self._scalars(ta, (width, steps, p, iterations, kind)), worker=0)

        def from_host(o, _a, _c):
            for t in range(steps):
                for x in range(width):
                    ta = TaskArgs()
                    ta.add_tensor(self.rows[t % 2][x], OUT)
                    for d in deps(pattern, t, x, width):
                        ta.add_tensor(self.rows[(t - 1) % 2][d], IN)
                    self._scalars(ta, (t, x, width, p, iterations, kind))
                    if self.config == "subs":
                        o.submit_sub(self.sub, ta)
                    elif self.config in ("tree", "remote"):
                        o.submit_next_level(self.point, ta, worker=x % 2)
                    else:
                        o.submit_next_level(self.point, ta, worker=x % 2)

        t0 = time.perf_counter()
        self.w.run(on_chip if self.config == "chip" else from_host)
        return time.perf_counter() - t0

    def run_serial(self, steps: int, iterations: int) -> float:
        def orch(o, _a, _c):
            o.submit_next_level(
                self.serial, self._scalars(TaskArgs(), (self.width, steps, 0, iterations, KINDS[self.kind])), worker=0
            )

        t0 = time.perf_counter()
        self.w.run(orch)
        return time.perf_counter() - t0


def metg(points: List[Tuple[float, float]]) -> Tuple[Optional[float], str]:
    """METG(50%) from (granularity, efficiency) points, largest granularity first: the smallest
    granularity that still reaches 50 % (Task Bench's definition; noise can dip a larger one below),
    interpolated in log granularity towards the next smaller point, which does not."""
    above = [k for k, (_g, e) in enumerate(points) if e >= 0.5]
    if not above:
        return None, f"> {points[0][0] * 1e6:.1f} µs" if points else "n/a"
    k = above[-1]
    if k == len(points) - 1:
        return None, f"< {points[k][0] * 1e6:.1f} µs"
    (g0, e0), (g1, e1) = points[k], points[k + 1]
    g = math.exp(math.log(g0) + (e0 - 0.5) / (e0 - e1) * (math.log(g1) - math.log(g0)))
    return g, f"{g * 1e6:.1f} µs"


def sweep(bench: Bench, pattern: str, steps: int, opts, peak: float) -> List[dict]:
    tasks = bench.width * steps
    rows = []
    iterations = opts.iterations
    while iterations >= 1:
        bench.run_graph(pattern, steps, iterations)  # a warm-up, checked like the rest
        wall = statistics.median(bench.run_graph(pattern, steps, iterations) for _ in range(opts.repeats))
        flops = tasks * iterations * FLOP_PER_ITERATION[opts.kind]
        row = {
            "config": bench.config,
            "pattern": pattern,
            "iterations": iterations,
            "wall": wall,
            "granularity": wall * CORES / tasks,
            "efficiency": flops / wall / peak,
        }
        rows.append(row)
        print(
            f"| {bench.config} | {pattern} | {iterations} | {wall * 1e3:.2f} ms | "
            f"{row['granularity'] * 1e6:.2f} µs | {row['efficiency'] * 100:.1f} % |",
            flush=True,
        )
        if row["efficiency"] < opts.floor:
            break
        iterations //= 2
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default="chip,chips,subs,tree")
    p.add_argument("--patterns", default=",".join(PATTERNS), help="for the chip configuration")
    p.add_argument("--host-patterns", default="stencil_1d", help="for the host-submitted configurations")
    p.add_argument("--kind", choices=sorted(KINDS), default="compute")
    p.add_argument("--width", type=int, default=CORES)
    p.add_argument("--steps", type=int, default=1000, help="steps of the graph on one chip")
    p.add_argument("--host-steps", type=int, default=200, help="steps of a graph submitted from the host")
    p.add_argument("--iterations", type=int, help="the largest grain, halved from there (default: by kind)")
    p.add_argument("--floor", type=float, default=0.15, help="stop halving below this efficiency")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--spin",
        type=float,
        default=None,
        help="the Worker's spin: seconds an idle thread spins before it sleeps (default: adaptive, "
        "up to 25 µs; 0: sleep at once)",
    )
    p.add_argument(
        "--chip-core-threads", type=int, default=0, help="core threads of the one chip (default: one a core)"
    )
    p.add_argument("--plot", help="write a PNG of efficiency against task granularity here")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 20 steps, from at most 512 iterations, one repeat, down to 50 %% efficiency",
    )
    opts = p.parse_args(argv)
    if opts.iterations is None:
        opts.iterations = LARGEST_GRAIN[opts.kind]
    if opts.quick:
        opts.steps, opts.host_steps, opts.repeats, opts.floor = 20, 20, 1, 0.5
        opts.iterations = min(opts.iterations, 512)
    configs = opts.configs.split(",")
    rows: List[dict] = []
    summary: Dict[Tuple[str, str], str] = {}
    peak = 0.0
    for config in configs:
        bench = Bench(config, opts.width, opts.kind, opts.chip_core_threads if config == "chip" else 0, opts.spin)
        try:
            if peak == 0.0:  # the serial baseline, at the largest grain, in this run
                # (printed once a Worker has started: a remote child's rank never gets here)
                print(f"METG, {opts.kind}-bound kernel, width {opts.width}, {CORES} cores; medians of {opts.repeats}\n")
                print("| configuration | pattern | iterations | wall | granularity | efficiency |")
                print("|---|---|---|---|---|---|")
                steps = opts.steps
                serial = min(bench.run_serial(steps, opts.iterations) for _ in range(opts.repeats + 1))
                per_core = opts.width * steps * opts.iterations * FLOP_PER_ITERATION[opts.kind] / serial
                peak = per_core * CORES
                print(
                    f"| serial | (one core) | {opts.iterations} | {serial * 1e3:.2f} ms | "
                    f"{serial / (opts.width * steps) * 1e6:.2f} µs | peak {per_core / 1e9:.2f} GFLOP/s a core |"
                )
            patterns = opts.patterns if config == "chip" else opts.host_patterns
            steps = opts.steps if config == "chip" else opts.host_steps
            for pattern in patterns.split(","):
                mine = sweep(bench, pattern, steps, opts, peak)
                rows.extend(mine)
                summary[(config, pattern)] = metg([(r["granularity"], r["efficiency"]) for r in mine])[1]
        finally:
            bench.close()
    print("\n| configuration | pattern | METG(50%) |")
    print("|---|---|---|")
    for (config, pattern), text in summary.items():
        print(f"| {config} | {pattern} | {text} |")
    if opts.plot:
        plot(rows, opts.plot, opts.kind)
        print(f"\nplot: {opts.plot}")
    return 0


def plot(rows: List[dict], path: str, kind: str) -> None:
    fig, ax = plots.new_figure()
    series = sorted({(r["config"], r["pattern"]) for r in rows})
    for k, (config, pattern) in enumerate(series):
        mine = [r for r in rows if (r["config"], r["pattern"]) == (config, pattern)]
        ax.plot(
            [r["granularity"] * 1e6 for r in mine],
            [r["efficiency"] * 100 for r in mine],
            "o-" if config == "chip" else "s--",
            color=f"C{k % 10}",
            markersize=3,
            label=f"{config}: {pattern}",
        )
    ax.axhline(50, color="grey", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("task granularity (µs: wall x cores / tasks)")
    ax.set_ylabel("efficiency (% of the serial peak)")
    ax.set_title(f"METG: efficiency against task granularity, {kind}-bound, {CORES} cores")
    ax.set_ylim(0, 110)
    plots.save_figure(fig, ax, path, ncol=2)


if __name__ == "__main__":
    sys.exit(main())
