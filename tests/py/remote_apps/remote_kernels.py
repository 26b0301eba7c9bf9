"""Sub-worker callables and checks the remote test programs name by import path
('remote_kernels:colsum'): every rank imports this module from the script's directory."""

import os

import numpy as np

from simpler import DataType, MappedArgs, TaskArgs, TensorArgType


def add_on_chip(o, src, dst, handle, value: float) -> None:
    """In an L3 orchestration: dst = src + value on chip 0 (`handle`: std.add_scalar)."""
    ta = TaskArgs()
    ta.add_tensor(src, TensorArgType.INPUT)
    ta.add_tensor(dst, TensorArgType.OUTPUT_EXISTING)
    ta.add_scalar(int(np.float32(value).view(np.uint32)))
    o.submit_next_level(handle, ta, worker=0)


def slice_tasks(handle, src, dst, n: int, children, flagged=None):
    """An L4 orch fn: for each child i, L3 callable `handle` on slice i (n FLOAT32) of src (INPUT) and of
    dst (OUTPUT_EXISTING), scalar 0 set on child `flagged` only."""

    def orch(o, _a, _c):
        for i in children:
            ta = TaskArgs()
            ta.add_tensor(src.tensor((n,), DataType.FLOAT32, None, i * n * 4), TensorArgType.INPUT)
            ta.add_tensor(dst.tensor((n,), DataType.FLOAT32, None, i * n * 4), TensorArgType.OUTPUT_EXISTING)
            ta.add_scalar(int(i == flagged))
            o.submit_next_level(handle, ta, worker=i)

    return orch


def colsum(args: MappedArgs) -> None:
    """out[j] = sum over rows of the 2-D view in[.., j]."""
    args.array(1)[...] = args.array(0).sum(axis=0)


def total(args: MappedArgs) -> None:
    """out[0] = sum of in."""
    args.array(1)[...] = args.array(0).sum()


def identity_scalars(identity) -> tuple:
    """An identity as three u64 scalars (owner nonce, buffer_id, generation)."""
    return int.from_bytes(identity.owner_instance_id, "little"), identity.buffer_id, identity.generation


def check_identity(tensor, scalars, where: str) -> None:
    """RuntimeError unless `tensor`'s buffer has the identity the scalars carry."""
    got = identity_scalars(tensor.buffer.identity)
    if got != tuple(scalars):
        raise RuntimeError(f"{where}: identity {got} differs from the L4's {tuple(scalars)}")


def check_isolated(owner_nonce: int, where: str) -> None:
    """RuntimeError when this process sees a /dev/shm object of the L4's process
    (names start with 'sp' + its nonce): under `launch --isolate` it must not."""
    prefix = "sp" + owner_nonce.to_bytes(8, "little").hex()
    seen = [n for n in os.listdir("/dev/shm") if n.startswith(prefix)]
    if seen:
        raise RuntimeError(f"{where}: sees the L4's shm objects {seen[:3]}: /dev/shm is not private")


def shm_prefix(buffer) -> str:
    """The prefix of every /dev/shm name this process's buffers have ('sp' + its owner nonce)."""
    return "sp" + buffer.tensor((1,), DataType.UINT8).buffer.identity.owner_instance_id.hex()


def print_result(ok: bool, **info) -> None:
    details = " ".join(f"{k}={v}" for k, v in info.items())
    print(f"RESULT {'ok' if ok else 'FAILED'} {details}", flush=True)
