"""Device memory on a remote L3's chip: the L3 orchestration (on its rank)
allocates it, copies a forwarded host view in, runs a kernel on it and copies
the result out to the forwarded output view, as on a local L3; the device
buffer carries the remote L3's owner path.

Run: python -m simpler launch -n 2 --isolate remote_device.py
"""

import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

N = 4096
F32 = DataType.FLOAT32


def on_device(o, args, cfg):
    """L3: out = in + 2, through device memory of chip 0."""
    with o.scope():
        d_in = o.alloc_child_tensor(0, (N,), F32)
        d_out = o.alloc_child_tensor(0, (N,), F32)
        owner = repr(d_in.tensor().buffer)
        if not owner.endswith("owner L4/L3[0]/chip 0)"):
            raise RuntimeError(f"device memory of the remote chip carries {owner}")
        o.copy_to(d_in.tensor(), args[0])
        rk.add_on_chip(o, d_in.tensor(), d_out.tensor(), ADD, 2.0)
        o.copy_from(args[1], d_out.tensor())


w4 = Worker(level=4)
w4.add_remote_workers(1, num_chips=1)
ADD = w4.register(ChipCallable("std.add_scalar"))
ON_DEVICE = w4.register(on_device)
w4.init()
x = w4.alloc_shared_tensor((N,), F32)
y = w4.alloc_shared_tensor((N,), F32)
x.array()[...] = np.arange(N, dtype=np.float32)
y.array()[...] = 0


def orch(o, _a, _c):
    ta = TaskArgs()
    ta.add_tensor(x.tensor(), TensorArgType.INPUT)
    ta.add_tensor(y.tensor(), TensorArgType.OUTPUT_EXISTING)
    o.submit_next_level(ON_DEVICE, ta, worker=0)


w4.run(orch)
w4.run(orch)  # again: the first run's scope released its device memory
ok = bool(np.array_equal(y.array(), np.arange(N, dtype=np.float32) + 2))
shm = rk.shm_prefix(x)
w4.close()
rk.print_result(ok, shm=shm)
sys.exit(0 if ok else 1)
