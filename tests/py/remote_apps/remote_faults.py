"""Rank faults the launcher must report: `stop` — a remote rank stops (SIGSTOP)
mid-task: the L4 loses it, goes on and closes, and the launcher kills the stopped
rank and exits LOST_RANK_STATUS in bounded time; `kill_l4` — rank 0 (the L4)
is SIGKILLed after a run: the launcher exits non-zero, naming rank 0.

Run: python -m simpler launch -n 3 --isolate remote_faults.py stop|kill_l4
"""

import os
import signal
import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, Worker

N = 1024
F32 = DataType.FLOAT32
MODE = sys.argv[1]


def add_one(o, args, cfg):
    """L3: out = in + 1 on chip 0; scalar 0 set: this rank stops mid-task first."""
    if args.scalar(0):
        os.kill(os.getpid(), signal.SIGSTOP)
    rk.add_on_chip(o, args[0], args[1], ADD, 1.0)


w4 = Worker(level=4)
w4.add_remote_workers(2, num_chips=1)
ADD = w4.register(ChipCallable("std.add_scalar"))
ADD_ONE = w4.register(add_one)
w4.init()

src = w4.alloc_shared_tensor((2 * N,), F32)
dst = w4.alloc_shared_tensor((2 * N,), F32)
src.array()[...] = np.arange(2 * N, dtype=np.float32)
dst.array()[...] = 0


def tasks(children, stop_on=None):
    return rk.slice_tasks(ADD_ONE, src, dst, N, children, stop_on)


S = np.arange(2 * N, dtype=np.float32)
if MODE == "kill_l4":
    w4.run(tasks((0, 1)))
    print("RESULT ran", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

message = ""
try:
    w4.run(tasks((0, 1), stop_on=1))
except RuntimeError as e:
    message = str(e)
named = all(s in message for s in ("rank 2", "L4/L3[1]", "no heartbeat"))
status = w4.child_status()
dst.array()[...] = 0
w4.run(tasks((0,)))  # the L4 goes on with the child it has left
again = bool(np.array_equal(dst.array()[:N], S[:N] + 1))
shm = rk.shm_prefix(src)
w4.close()
ok = named and again and status[1].lost
print(message, file=sys.stderr)
rk.print_result(ok, shm=shm, named=named, again=again, child1_lost=status[1].lost)
sys.exit(0 if ok else 1)
