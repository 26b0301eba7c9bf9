"""A right-looking tiled Cholesky factorisation, A = L·Lᵀ, on chips.

The matrix lives in one Buffer; every task names tile views of it (2-D strided
views: rows of n elements, a tile's first element at its row and column) and
no dependency is written by hand: the runtime infers each from the tiles' exact
geometry. Step k of the textbook algorithm, for T x T tiles:

    potrf(A_kk)                         A_kk = L_kk, lower Cholesky factor
    trsm(A_kk, A_ik)        i > k       A_ik = A_ik · L_kk⁻ᵀ
    syrk(A_ik, A_ii)        i > k       A_ii = A_ii - A_ik · A_ikᵀ
    gemm(A_ik, A_jk, A_ij)  i > j > k   A_ij = A_ij - A_ik · A_jkᵀ

Tiles are spread over the chips (tile (i, j) on chip (i + j) mod chips). The
result's lower triangle is checked against numpy.linalg.cholesky; the inferred
graph is checked against the textbook DAG: every edge the runtime recorded is
one of the DAG's, and it recorded all of them (a gate task over the whole
matrix holds the first tasks until every task is submitted: without it a task
already finished when its reader is submitted needs, and gets, no edge).

With --not-spd the input is not positive definite: the run fails, naming the
task, the tile whose potrf failed and LAPACK's info.

    python examples/cholesky.py [--n 512] [--tile 64] [--chips 2] [--dtype float64] [--not-spd]
"""

import argparse
import struct
import time
from typing import Dict, List, Set, Tuple

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker
from simpler.runtime.trace import intervals

IN, INOUT, NO_DEP = TensorArgType.INPUT, TensorArgType.INOUT, TensorArgType.NO_DEP
DTYPES = {"float32": DataType.FLOAT32, "float64": DataType.FLOAT64}

Tile = Tuple[int, int]
Op = Tuple[str, int, int, int]  # (kernel, i, j, k): the task of step k on tile (i, j)


def gate(args):
    """Holds until the orchestration has submitted every task: waits for the flag (argument 1)
    to become 1, at most 60 s; argument 0, the whole matrix, is only named, so every task
    waits for this one."""
    flag = args.array(1)
    deadline = time.monotonic() + 60
    while flag[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.001)


def ops(t: int) -> List[Tuple[Op, List[Tile], List[Tile]]]:
    """The tiled Cholesky's tasks in submission order, each with the tiles it reads and writes."""
    out: List[Tuple[Op, List[Tile], List[Tile]]] = []
    for k in range(t):
        out.append((("potrf", k, k, k), [], [(k, k)]))
        for i in range(k + 1, t):
            out.append((("trsm", i, k, k), [(k, k)], [(i, k)]))
        for i in range(k + 1, t):
            out.append((("syrk", i, i, k), [(i, k)], [(i, i)]))
            for j in range(k + 1, i):
                out.append((("gemm", i, j, k), [(i, k), (j, k)], [(i, j)]))
    return out


def textbook_dag(tasks: List[Tuple[Op, List[Tile], List[Tile]]]) -> Set[Tuple[int, int]]:
    """The DAG's edges (predecessor, successor) as indices into `tasks`: for each tile, a
    task depends on its last writer (read or write after write) and a writer on the readers
    since that write (write after read)."""
    writer: Dict[Tile, int] = {}
    readers: Dict[Tile, List[int]] = {}
    edges: Set[Tuple[int, int]] = set()
    for s, (_, reads, writes) in enumerate(tasks):
        for tile in reads + writes:
            if tile in writer:
                edges.add((writer[tile], s))
        for tile in writes:
            edges.update((r, s) for r in readers.get(tile, []) if r != s)
            writer[tile] = s
            readers[tile] = []
        for tile in reads:
            readers.setdefault(tile, []).append(s)
    return edges


def scalar_bits(x: float, dtype: DataType) -> int:
    """A float as the u64 scalar the kernels read: an f32's bits or an f64's."""
    if dtype == DataType.FLOAT64:
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    return struct.unpack("<I", struct.pack("<f", x))[0]


def spd_matrix(n: int, np_dtype, rng) -> np.ndarray:
    g = rng.standard_normal((n, n))
    return (g @ g.T / n + np.eye(n)).astype(np_dtype)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=512, help="matrix order")
    p.add_argument("--tile", type=int, default=64, help="tile order (divides n)")
    p.add_argument("--chips", type=int, default=2)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float64")
    p.add_argument("--not-spd", action="store_true", help="make one diagonal element negative: the run must fail")
    opts = p.parse_args(argv)
    n, b = opts.n, opts.tile
    if n % b:
        p.error("--tile must divide --n")
    t = n // b
    dtype = DTYPES[opts.dtype]
    np_dtype = np.float64 if dtype == DataType.FLOAT64 else np.float32
    a = spd_matrix(n, np_dtype, np.random.default_rng(44))
    bad_tile = t - 1 if t > 1 else 0
    if opts.not_spd:
        a[n - b // 2, n - b // 2] = -1.0  # in the last diagonal tile: its potrf fails
    tasks = ops(t)

    # The trace says which task failed (its RUN event, not ok) when --not-spd makes one fail.
    with Worker(level=3, num_chips=opts.chips, num_sub_workers=1, record_edges=True, trace=opts.not_spd) as w:
        kernels = {name: w.register(ChipCallable(f"std.{name}")) for name in ("potrf", "trsm", "syrk", "gemm")}
        gate_fn = w.register(gate)
        w.init()
        m = w.create_buffer(n * n * np.dtype(np_dtype).itemsize)
        flag = w.alloc_shared_tensor((1,), DataType.INT32)
        m.array((n, n), dtype)[...] = a
        flag.array()[0] = 0
        which: Dict[int, Op] = {}  # task id -> its op
        index: Dict[int, int] = {}  # task id -> its index in `tasks`

        def tile(i: int, j: int):
            return m.tensor((b, b), dtype, (n, 1), (i * b * n + j * b) * np.dtype(np_dtype).itemsize)

        def orch(o, _args, _cfg):
            g = TaskArgs()
            g.add_tensor(m.tensor((n, n), dtype), INOUT)
            g.add_tensor(flag.tensor(), NO_DEP)
            gate_task = o.submit_sub(gate_fn, g)
            which[gate_task.id] = ("gate", 0, 0, 0)
            for s, (op, reads, writes) in enumerate(tasks):
                ta = TaskArgs()
                for r in reads:
                    ta.add_tensor(tile(*r), IN)
                for wr in writes:
                    ta.add_tensor(tile(*wr), INOUT)
                if op[0] == "gemm":  # A_ij = A_ij - A_ik · A_jkᵀ
                    for s_ in (0, 1, scalar_bits(-1.0, dtype), scalar_bits(1.0, dtype)):
                        ta.add_scalar(s_)
                task = o.submit_next_level(kernels[op[0]], ta, worker=(op[1] + op[2]) % opts.chips)
                which[task.id] = op
                index[task.id] = s
            flag.array()[0] = 1  # every task is submitted: the gate lets them go

        print(
            f"tiled Cholesky of a {n}x{n} {dtype.name} matrix in {t}x{t} tiles of {b}x{b}: "
            f"{len(tasks)} tasks on {opts.chips} chips"
        )
        try:
            started = time.perf_counter()
            w.run(orch)
            seconds = time.perf_counter() - started
        except RuntimeError as e:
            print(f"the run failed: {e}")
            if not opts.not_spd:
                return 1
            failed = [iv.task for iv in intervals(w.trace_events()) if not iv.ok]
            for h in failed:
                op = which[h.id]
                print(
                    f"{h.name()} is {op[0]} of tile ({op[1]},{op[2]}): rows {op[1] * b}..{op[1] * b + b - 1}, "
                    f"columns {op[2] * b}..{op[2] * b + b - 1}"
                )
            expected = [h for h in failed if which[h.id] == ("potrf", bad_tile, bad_tile, bad_tile)]
            lapack = "LAPACK dpotrf info" if dtype == DataType.FLOAT64 else "LAPACK spotrf info"
            named = len(failed) == 1 and expected == failed and f"{failed[0].name()} " in str(e) and lapack in str(e)
            print(f"the failure names the task, its tile and LAPACK's info: {named}")
            return 0 if named else 1
        if opts.not_spd:
            print("the run did not fail on a matrix that is not positive definite")
            return 1
        edges = w.take_edge_log()
        result = np.tril(m.array((n, n), dtype))

    gate_id = next(tid for tid, op in which.items() if op[0] == "gate")
    recorded = {(index[e.predecessor], index[e.successor]) for e in edges if e.predecessor != gate_id}
    from_gate = sum(1 for e in edges if e.predecessor == gate_id)
    expected = textbook_dag(tasks)
    print(f"ran in {seconds * 1e3:.1f} ms ({n**3 / 3 / seconds / 1e9:.2f} GFLOP/s)")
    print(
        f"edges inferred: {len(recorded)} between the factorisation's tasks (the textbook DAG has "
        f"{len(expected)}), {from_gate} from the gate"
    )
    false_edges = recorded - expected
    missing = expected - recorded
    for s, q in sorted(false_edges)[:5]:
        print(f"  an edge the DAG does not have: {tasks[s][0]} -> {tasks[q][0]}")
    for s, q in sorted(missing)[:5]:
        print(f"  a DAG edge not inferred: {tasks[s][0]} -> {tasks[q][0]}")
    reference = np.linalg.cholesky(a.astype(np.float64))
    tolerance = 1e-10 if dtype == DataType.FLOAT64 else 2e-4
    error = float(np.abs(result - reference).max() / np.abs(reference).max())
    ok = error < tolerance
    print(f"matches numpy.linalg.cholesky: {ok} (largest difference {error:.2e} of the largest element)")
    return 0 if ok and not false_edges and not missing else 1


if __name__ == "__main__":
    raise SystemExit(main())
