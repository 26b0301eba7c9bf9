"""Smoke: one local and two remote L3 children each run a chip task on a slice of one L4 buffer; a global
domain with a member on a remote child is refused."""

import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, TaskArgs, TensorArgType, Worker
from simpler._core import DataType


def fill(orch, args, cfg):
    """L3 orchestration: out = in + 1 on chip 0."""
    rk.add_on_chip(orch, args[0], args[1], ADD, 1.0)


w4 = Worker(level=4)
w4.add_worker(Worker(level=3, num_chips=1))
w4.add_remote_workers(2, num_chips=1)
ADD = w4.register(ChipCallable("std.add_scalar"))
FILL = w4.register(fill)
w4.init()
n = 3 * 1024
src = w4.alloc_shared_tensor((n,), DataType.FLOAT32)
dst = w4.alloc_shared_tensor((n,), DataType.FLOAT32)
src.array()[:] = np.arange(n, dtype=np.float32)


def orch(o, a, c):
    for i in range(3):
        ta = TaskArgs()
        ta.add_tensor(src.tensor((1024,), byte_offset=i * 4096), TensorArgType.INPUT)
        ta.add_tensor(dst.tensor((1024,), byte_offset=i * 4096), TensorArgType.OUTPUT_EXISTING)
        o.submit_next_level(FILL, ta, worker=i)


w4.run(orch)
ok = np.array_equal(dst.array(), src.array() + 1)
# A global domain takes local children only: a member on a remote one is refused, allocating nothing.
refusal = ""
try:
    w4.run(lambda o, a, c: o.allocate_global_domain("g", members=[(0, 0), (1, 0)], window_size=4096))
except ValueError as e:
    refusal = str(e)
ok = ok and refusal == (
    "allocate_global_domain 'g': members[1]: child 1 of L4 is a remote Worker "
    "(add_remote_workers); a global domain takes local children only"
)
ok = ok and w4.global_window_stats()["live_domains"] == 0
print("RESULT", ok, flush=True)
w4.close()
sys.exit(0 if ok else 1)
