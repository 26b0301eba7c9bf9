"""OpenCL chips in a tree that spans ranks: one local and one remote L3, each
with an OpenCL chip, run an OpenCL C kernel of the user's (saxpy, which only an
OpenCL chip can run) on their half of one L4 buffer through an L3
orchestration; y = 1 + 2 x checked element by element.

Run: python -m simpler launch -n 2 --isolate remote_opencl.py
"""

import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

N = 2048
SAXPY = r"""
__kernel void saxpy(__global const float* x, const simpler_view vx, __global float* y, const simpler_view vy,
                    const ulong a) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(vy)) y[simpler_at(vy, i)] += as_float((uint)a) * x[simpler_at(vx, i)];
}
"""


def on_l3(o, args, _cfg):
    """L3: y += 2 x on chip 0, an OpenCL chip."""
    ta = TaskArgs()
    ta.add_tensor(args[0], TensorArgType.INPUT)
    ta.add_tensor(args[1], TensorArgType.INOUT)
    ta.add_scalar(int(np.float32(2.0).view(np.uint32)))
    o.submit_next_level(SAXPY_HANDLE, ta, worker=0)


w4 = Worker(level=4)
w4.add_worker(Worker(level=3, num_chips=1, device="opencl"))
w4.add_remote_workers(1, num_chips=1, device="opencl")
SAXPY_HANDLE = w4.register(ChipCallable.from_opencl(SAXPY, "saxpy"))
ON_L3 = w4.register(on_l3)
w4.init()
x = w4.alloc_shared_tensor((2 * N,), DataType.FLOAT32)
y = w4.alloc_shared_tensor((2 * N,), DataType.FLOAT32)
x.array()[...] = np.arange(2 * N, dtype=np.float32)
y.array()[...] = 1.0


def orch(o, _a, _c):
    for i in range(2):  # half 0 on the local L3, half 1 on the remote one
        ta = TaskArgs()
        ta.add_tensor(x.tensor((N,), DataType.FLOAT32, None, i * N * 4), TensorArgType.INPUT)
        ta.add_tensor(y.tensor((N,), DataType.FLOAT32, None, i * N * 4), TensorArgType.INOUT)
        o.submit_next_level(ON_L3, ta, worker=i)


w4.run(orch)
ok = bool(np.array_equal(y.array(), 1.0 + 2.0 * np.arange(2 * N, dtype=np.float32)))
shm = rk.shm_prefix(x)
w4.close()
rk.print_result(ok, shm=shm)
sys.exit(0 if ok else 1)
