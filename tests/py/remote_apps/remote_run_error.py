"""A chip task that fails on a remote L3: the L4's run() raises a RunError
whose fields came across MPI as a report (DONE status 2), not as a sentence —
the path L4 → L3[0] → chip 0, the L4's task on worker 0, the L3's task on its
chip with the chip's cause — and the L4 goes on.

Run: python -m simpler launch -n 2 --isolate remote_run_error.py
"""

import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, RunError, TaskArgs, TensorArgType, Worker

N = 1024
F32 = DataType.FLOAT32


def mismatched(o, args, cfg):
    """L3: std.vector_add on chip 0 with one input half as long: the chip refuses it."""
    ta = TaskArgs()
    ta.add_tensor(args[0], TensorArgType.INPUT)
    ta.add_tensor(args[1], TensorArgType.INPUT)
    ta.add_tensor(args[2], TensorArgType.OUTPUT_EXISTING)
    o.submit_next_level(VADD, ta, worker=0)


def add_one(o, args, cfg):
    rk.add_on_chip(o, args[0], args[1], ADD, 1.0)


w4 = Worker(level=4)
w4.add_remote_workers(1, num_chips=1)
VADD = w4.register(ChipCallable("std.vector_add"))
ADD = w4.register(ChipCallable("std.add_scalar"))
MISMATCHED = w4.register(mismatched)
ADD_ONE = w4.register(add_one)
w4.init()

a = w4.alloc_shared_tensor((N,), F32)
c = w4.alloc_shared_tensor((N,), F32)
a.array()[...] = np.arange(N, dtype=np.float32)
c.array()[...] = 0
handles = []


def failing(o, _a, _c):
    ta = TaskArgs()
    ta.add_tensor(a.tensor((N,), F32), TensorArgType.INPUT)
    ta.add_tensor(a.tensor((N // 2,), F32), TensorArgType.INPUT)
    ta.add_tensor(c.tensor((N,), F32), TensorArgType.OUTPUT_EXISTING)
    handles.append(o.submit_next_level(MISMATCHED, ta, worker=0))


error = None
try:
    w4.run(failing)
except RunError as e:
    error = e
fields = {}
if error is not None:
    top, below = error.levels[0], error.levels[-1]
    fields = {
        "path": "/".join(error.path).replace(" ", "_"),
        "code": error.code,
        "levels": len(error.levels),
        "top": f"{error.task}:{error.run}:{error.child_kind}:{error.child_index}:{top.code}",
        "handle": f"{handles[0].id}:{handles[0].run}",
        "below": f"{below.level}:{below.callable}:{below.child_kind}:{below.child_index}",
        "cause_named": "shape differs" in error.text,
        "message_has_path": str(error).startswith("L4 → L3[0] → chip 0: "),
    }
    print(error, file=sys.stderr)


def ok_run(o, _a, _c):
    ta = TaskArgs()
    ta.add_tensor(a.tensor((N,), F32), TensorArgType.INPUT)
    ta.add_tensor(c.tensor((N,), F32), TensorArgType.OUTPUT_EXISTING)
    o.submit_next_level(ADD_ONE, ta, worker=0)


w4.run(ok_run)
again = bool(np.array_equal(c.array(), np.arange(N, dtype=np.float32) + 1))
shm = rk.shm_prefix(a)
w4.close()
ok = error is not None and again
rk.print_result(ok, shm=shm, again=again, **fields)
sys.exit(0 if ok else 1)
