"""An L4 with one local and two remote L3 Workers (2 chips, 1 sub-worker each):
C = A @ B in three column tiles, one per L3, each tile in two halves on its
chips; each L3 sums its tile's columns on its sub-worker, and the L4's own
sub-worker sums those. Checked against NumPy; every L3 checks that A reached it
with the L4's identity (and, with --isolated, that its host shows none of the
L4's shm objects), and every chip's import log names A's identity.

Run: python -m simpler launch -n 3 --isolate remote_matmul.py [--isolated] [--import-log DIR]
"""

import argparse
import os
import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, TaskArgs, TaskKind, TensorArgType, Worker
from simpler.cli.demo_tree import columns

M, K, N = 96, 64, 192
TILE = N // 3
F32 = DataType.FLOAT32


def tile(o, args, cfg):
    """L3: this tile's two column halves on chips 0 and 1, then its column sums on a sub-worker."""
    a, b, c, sums = args[0], args[1], args[2], args[3]
    rk.check_identity(a, [args.scalar(i) for i in range(3)], o.worker.path)
    if args.scalar(3):
        rk.check_isolated(args.scalar(0), o.worker.path)
    half = TILE // 2
    for chip in range(2):
        ta = TaskArgs()
        ta.add_tensor(a, TensorArgType.INPUT)
        ta.add_tensor(columns(b, chip * half, half), TensorArgType.INPUT)
        ta.add_tensor(columns(c, chip * half, half), TensorArgType.OUTPUT_EXISTING)
        o.submit_next_level(MATMUL, ta, worker=chip)
    ta = TaskArgs()
    ta.add_tensor(c, TensorArgType.INPUT)
    ta.add_tensor(sums, TensorArgType.OUTPUT_EXISTING)
    o.submit_sub(COLSUM, ta)


parser = argparse.ArgumentParser()
parser.add_argument("--isolated", action="store_true")
parser.add_argument("--import-log")
opts = parser.parse_args()
if opts.import_log:
    os.environ["SIMPLER_IMPORT_LOG"] = opts.import_log  # before init(): every chip of every rank inherits it

w4 = Worker(level=4, num_sub_workers=1, record_edges=True)
w4.add_worker(Worker(level=3, num_chips=2, num_sub_workers=1))
w4.add_remote_workers(2, num_chips=2, num_sub_workers=1)
MATMUL = w4.register(ChipCallable("std.matmul"))
COLSUM = w4.register("remote_kernels:colsum", kind=TaskKind.SUB)
TOTAL = w4.register("remote_kernels:total", kind=TaskKind.SUB)
TILE_H = w4.register(tile)
w4.init()  # ranks 1 and 2 serve from here and never return

rng = np.random.default_rng(5)
A = rng.standard_normal((M, K), dtype=np.float32)
B = rng.standard_normal((K, N), dtype=np.float32)
a = w4.alloc_shared_tensor((M, K), F32)
b = w4.alloc_shared_tensor((K, N), F32)
c = w4.alloc_shared_tensor((M, N), F32)
sums = w4.alloc_shared_tensor((N,), F32)
tot = w4.alloc_shared_tensor((1,), F32)
a.array()[...] = A
b.array()[...] = B
c.array()[...] = np.nan
ident = rk.identity_scalars(a.tensor().buffer.identity)


def orch(o, _args, _cfg):
    for t in range(3):
        ta = TaskArgs()
        ta.add_tensor(a.tensor(), TensorArgType.INPUT)
        ta.add_tensor(b.tensor((K, TILE), F32, (N, 1), t * TILE * 4), TensorArgType.INPUT)
        ta.add_tensor(c.tensor((M, TILE), F32, (N, 1), t * TILE * 4), TensorArgType.OUTPUT_EXISTING)
        ta.add_tensor(sums.tensor((TILE,), F32, None, t * TILE * 4), TensorArgType.OUTPUT_EXISTING)
        for s in (*ident, int(opts.isolated and t > 0)):  # child 0 is local: it shares the host
            ta.add_scalar(s)
        o.submit_next_level(TILE_H, ta, worker=t)
    ta = TaskArgs()
    ta.add_tensor(sums.tensor(), TensorArgType.INPUT)
    ta.add_tensor(tot.tensor(), TensorArgType.OUTPUT_EXISTING)
    o.submit_sub(TOTAL, ta)


w4.run(orch)
# The L4's graph keys on the same identities as for local children: the three
# tiles write disjoint columns (no edge among them); the total reads every tile's sums.
edges = w4.take_edge_log()
# (an edge from a tile that had already finished when the total was submitted is not drawn).
tile_edges = sum(e.successor in (1, 2, 3) for e in edges)
edges_ok = tile_edges == 0 and all(e.successor == 4 and e.predecessor in (1, 2, 3) for e in edges)
C = c.array().copy()
ok = bool(np.allclose(C, A @ B, rtol=1e-4, atol=1e-3))
ok_sums = bool(np.allclose(sums.array(), C.sum(axis=0), rtol=1e-4, atol=1e-2))
ok_total = bool(np.isclose(tot.array()[0], C.sum(), rtol=1e-3, atol=1e-1))
chips_with_a = 0
if opts.import_log:
    name = str(a.tensor().buffer.identity)
    for f in os.listdir(opts.import_log):
        with open(os.path.join(opts.import_log, f)) as log:
            chips_with_a += any(name in line for line in log)
shm = rk.shm_prefix(a)
w4.close()
rk.print_result(
    ok and ok_sums and ok_total and edges_ok,
    shm=shm,
    matmul=ok,
    tile_edges=tile_edges,
    edges_ok=edges_ok,
    colsums=ok_sums,
    total=ok_total,
    chips_with_a=chips_with_a,
)
sys.exit(0 if ok and ok_sums and ok_total and edges_ok else 1)
