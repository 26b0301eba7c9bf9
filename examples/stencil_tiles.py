"""Precise overlap at work: a Jacobi stencil on a 2-D grid cut into tiles.

Each step is one task per tile: it reads its tile plus a one-cell halo of the
grid it reads from and writes its tile of the other grid (2-D strided views of
one buffer each). The runtime infers every edge from the views' exact geometry:

- tiles of one step write disjoint regions: no edge between them, so they run
  concurrently on the sub-workers;
- a tile of step k+1 reads its halo, which overlaps only the tiles of step k
  next to it: an edge from each of those (read after write), and from the
  step-k tiles that read the region it overwrites (write after read) — never
  from a tile that shares no byte with it, although every tile's byte range
  interleaves with every other's.

The edge log of the run is printed, with the tiles each edge joins, and how many
pairs of one step's tiles the trace saw running at the same time (any number is
a correct schedule: no edge forbids it); the result is checked against NumPy.

    python examples/stencil_tiles.py [--grid 96] [--tiles 3] [--steps 4]
"""

import argparse
import itertools

import numpy as np

from simpler import DataType, EdgeKind, TaskArgs, TensorArgType, Worker
from simpler.runtime.trace import intervals

F32 = DataType.FLOAT32


def jacobi_tile(args):
    """One tile of one step. args: the halo'd region read (tensor 0), the tile written (tensor 1);
    scalars: the tile's row and column offset inside the region, and whether each edge of the
    region is the grid's boundary (top, left, bottom, right) — boundary cells keep their value."""
    src, dst = args.array(0), args.array(1)
    r0, c0, top, left, bottom, right = args.scalars
    rows, cols = dst.shape
    padded = src[max(r0 - 1, 0) : r0 + rows + 1, max(c0 - 1, 0) : c0 + cols + 1]
    # neighbours' average for every cell of the tile that has four neighbours in the grid
    out = src[r0 : r0 + rows, c0 : c0 + cols].copy()
    i0, j0 = (1 if top else 0), (1 if left else 0)
    i1, j1 = rows - (1 if bottom else 0), cols - (1 if right else 0)
    pi, pj = r0 - max(r0 - 1, 0), c0 - max(c0 - 1, 0)  # the tile's origin inside `padded`
    ii, jj = slice(pi + i0, pi + i1), slice(pj + j0, pj + j1)
    up = padded[pi + i0 - 1 : pi + i1 - 1, jj]
    down = padded[pi + i0 + 1 : pi + i1 + 1, jj]
    west = padded[ii, pj + j0 - 1 : pj + j1 - 1]
    east = padded[ii, pj + j0 + 1 : pj + j1 + 1]
    out[i0:i1, j0:j1] = 0.25 * (up + down + west + east)
    dst[...] = out


def reference(grid: np.ndarray, steps: int) -> np.ndarray:
    u = grid.copy()
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", type=int, default=96, help="grid side (cells)")
    p.add_argument("--tiles", type=int, default=3, help="tiles per side")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--sub-workers", type=int, default=2)
    opts = p.parse_args(argv)
    n, t = opts.grid, opts.tiles
    if n % t or n // t < 2:
        p.error("--grid must be a multiple of --tiles, with tiles of 2 cells or more")
    side = n // t

    rng = np.random.default_rng(3)
    grid = rng.standard_normal((n, n)).astype(np.float32)
    with Worker(level=3, num_sub_workers=opts.sub_workers, record_edges=True, trace=True) as w:
        step_fn = w.register(jacobi_tile)
        w.init()
        bufs = [w.create_buffer(n * n * 4) for _ in range(2)]
        bufs[0].array((n, n), F32)[...] = grid
        bufs[1].array((n, n), F32)[...] = grid  # boundary cells are never written: both grids hold them
        where = {}  # task id -> (step, tile row, tile column)

        def view(buf, r0, c0, rows, cols):
            return buf.tensor((rows, cols), F32, (n, 1), (r0 * n + c0) * 4)

        def orch(o, _args, _cfg):
            for step in range(opts.steps):
                src, dst = bufs[step % 2], bufs[(step + 1) % 2]
                for ti, tj in itertools.product(range(t), range(t)):
                    r0, c0 = ti * side, tj * side
                    h0, w0 = max(r0 - 1, 0), max(c0 - 1, 0)
                    h1, w1 = min(r0 + side + 1, n), min(c0 + side + 1, n)
                    ta = TaskArgs()
                    ta.add_tensor(view(src, h0, w0, h1 - h0, w1 - w0), TensorArgType.INPUT)
                    ta.add_tensor(view(dst, r0, c0, side, side), TensorArgType.OUTPUT_EXISTING)
                    for s in (r0 - h0, c0 - w0, r0 == 0, c0 == 0, r0 + side == n, c0 + side == n):
                        ta.add_scalar(int(s))
                    task = o.submit_sub(step_fn, ta)
                    where[task.id] = (step, ti, tj)

        w.run(orch)
        edges = w.take_edge_log()
        ran = intervals(w.trace_events())
        result = bufs[opts.steps % 2].array((n, n), F32).copy()

    print(
        f"{opts.steps} Jacobi steps on a {n}x{n} grid in {t}x{t} tiles of {side}x{side}: "
        f"{len(where)} tasks on {opts.sub_workers} sub-workers"
    )
    print(f"edges inferred ({len(edges)}; a task that had finished before its reader was submitted needs none):")

    def name(task_id):
        step, ti, tj = where[task_id]
        return f"step {step} tile ({ti},{tj})"

    for e in sorted(edges, key=lambda e: (e.successor, e.predecessor)):
        what = {
            EdgeKind.READ_AFTER_WRITE: "reads its halo from",
            EdgeKind.WRITE_AFTER_READ: "overwrites what was read by",
            EdgeKind.WRITE_AFTER_WRITE: "overwrites",
        }[e.kind]
        print(f"  {name(e.successor)} {what} {name(e.predecessor)}  ({e.kind.name}, overlap {e.overlap.name})")
    pairs = [(where[e.predecessor], where[e.successor]) for e in edges]
    same_step = sum(a[0] == b[0] for a, b in pairs)
    neighbours = all(abs(a[1] - b[1]) <= 1 and abs(a[2] - b[2]) <= 1 for a, b in pairs)
    print(f"edges between tiles of one step: {same_step}; every edge joins neighbouring tiles: {neighbours}")
    together = sum(
        1
        for a, b in itertools.combinations(ran, 2)
        if where[a.task.id][0] == where[b.task.id][0] and a.lane != b.lane and a.overlaps(b)
    )
    print(f"pairs of tiles of one step that ran at the same time on two sub-workers (from the trace): {together}")
    ok = bool(np.allclose(result, reference(grid, opts.steps), rtol=1e-5, atol=1e-5))
    print(f"matches NumPy: {ok}")
    return 0 if ok and same_step == 0 and neighbours else 1


if __name__ == "__main__":
    raise SystemExit(main())
