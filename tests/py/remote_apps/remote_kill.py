"""A remote rank killed mid-task: the L4's run() raises naming the rank, the
child and the task; the tasks on the other children finish; the L4 goes on with
the children it has left and closes cleanly.

Run: python -m simpler launch -n 3 --isolate remote_kill.py
"""

import os
import signal
import sys
import time

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, Worker

N = 1024
F32 = DataType.FLOAT32


def add_one(o, args, cfg):
    """L3: out = in + 1 on chip 0; scalar 0 set: this rank dies mid-task first."""
    if args.scalar(0):
        os.kill(os.getpid(), signal.SIGKILL)
    rk.add_on_chip(o, args[0], args[1], ADD, 1.0)


w4 = Worker(level=4)
w4.add_worker(Worker(level=3, num_chips=1))
w4.add_remote_workers(2, num_chips=1)
ADD = w4.register(ChipCallable("std.add_scalar"))
ADD_ONE = w4.register(add_one)
w4.init()

src = w4.alloc_shared_tensor((3 * N,), F32)
dst = w4.alloc_shared_tensor((3 * N,), F32)
src.array()[...] = np.arange(3 * N, dtype=np.float32)
dst.array()[...] = 0


def tasks(children, die_on=None):
    return rk.slice_tasks(ADD_ONE, src, dst, N, children, die_on)


start = time.monotonic()
message = ""
fields = {}
try:
    w4.run(tasks((0, 1, 2), die_on=2))
except RuntimeError as e:
    message = str(e)
    fields = {"code": getattr(e, "code", None), "path": "/".join(getattr(e, "path", ())).replace(" ", "_")}
detect_s = time.monotonic() - start
S = np.arange(3 * N, dtype=np.float32)
others_done = bool(np.array_equal(dst.array()[: 2 * N], S[: 2 * N] + 1))
named = all(s in message for s in ("rank 2", "L4/L3[2]", "task 3 of run 0", "no heartbeat"))
status = w4.child_status()
dst.array()[...] = 0
w4.run(tasks((0, 1)))  # the L4 goes on with the children it has left
again = bool(np.array_equal(dst.array()[: 2 * N], S[: 2 * N] + 1))
shm = rk.shm_prefix(src)
w4.close()
ok = named and others_done and again and status[2].lost
print(message, file=sys.stderr)
rk.print_result(
    ok,
    shm=shm,
    named=named,
    others_done=others_done,
    again=again,
    detect_s=f"{detect_s:.2f}",
    child2_lost=status[2].lost,
    **fields,
)
sys.exit(0 if ok else 1)
