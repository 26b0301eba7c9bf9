"""A column block of a row-major matrix sent to a remote chip moves exactly its
bytes: the L4 counts the payload bytes sent to and received from the remote
rank, and checks that only the block of the output was written.

Run: python -m simpler launch -n 2 --isolate remote_strided.py
"""

import sys

import numpy as np
import remote_kernels as rk

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker, _core

R, C, J0, W = 64, 64, 16, 16  # the block: all rows, columns [J0, J0 + W)
F32 = DataType.FLOAT32


def add_one(o, args, cfg):
    """L3: out = in + 1 on chip 0."""
    rk.add_on_chip(o, args[0], args[1], ADD, 1.0)


w4 = Worker(level=4)
w4.add_remote_workers(1, num_chips=1)
ADD = w4.register(ChipCallable("std.add_scalar"))
ADD_ONE = w4.register(add_one)
w4.init()

x = w4.alloc_shared_tensor((R, C), F32)
y = w4.alloc_shared_tensor((R, C), F32)
X = np.random.default_rng(2).standard_normal((R, C), dtype=np.float32)
x.array()[...] = X
y.array()[...] = -7.0


def block(t):
    return t.tensor((R, W), F32, (C, 1), J0 * 4)


def orch(o, _a, _c):
    ta = TaskArgs()
    ta.add_tensor(block(x), TensorArgType.INPUT)
    ta.add_tensor(block(y), TensorArgType.OUTPUT_EXISTING)
    o.submit_next_level(ADD_ONE, ta, worker=0)


sent0, received0 = _core.remote_payload_bytes(1)
w4.run(orch)
sent, received = (v - v0 for v, v0 in zip(_core.remote_payload_bytes(1), (sent0, received0), strict=True))
Y = y.array().copy()
expected = np.full((R, C), -7.0, dtype=np.float32)
expected[:, J0 : J0 + W] = X[:, J0 : J0 + W] + 1
block_bytes = R * W * 4
ok = sent == block_bytes and received == block_bytes and np.array_equal(Y, expected) and np.array_equal(x.array(), X)
shm = rk.shm_prefix(x)
w4.close()
rk.print_result(
    ok,
    shm=shm,
    sent=sent,
    received=received,
    block_bytes=block_bytes,
    bounding_bytes=((R - 1) * C + W) * 4,
    only_block_written=bool(np.array_equal(Y, expected)),
)
sys.exit(0 if ok else 1)
