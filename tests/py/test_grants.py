"""Grants that cannot be bypassed or forged: a sub-worker's write through a READ
grant, or through an INPUT view of a writable buffer, never lands in the owner's
bytes and fails the run naming the buffer and the grant (for FORK_SHM, POSIX_SHM
and FORK_COW; through NumPy, a memoryview and torch.frombuffer); a descriptor
with an invented identity or a grant its owner never gave is refused at submit
and changes nothing."""

import os
from pathlib import Path

import numpy as np
import pytest

from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    ChipCallable,
    DataType,
    Tensor,
    TensorArgType,
    Worker,
    view_array,
)
from simpler.model.buffer import create_buffer
from torch_helpers import require_torch
from worker_helpers import Gate, args, close_and_check, kernel_callable

N = 16


def torch_write(a):
    torch = require_torch()

    torch.frombuffer(a[0].buffer, dtype=torch.float32).fill_(9.0)


def memoryview_write(a):
    a[0].buffer.cast("B")[0] = 9  # refused by the memoryview itself (read-only)


def numpy_write(a):
    a.array(0)[0] = 9.0  # refused by NumPy (the array is not writeable)


def numpy_forced_write(a):
    # Past NumPy's writeable flag: an array over the raw address stores to the page itself.
    import ctypes

    address = np.frombuffer(a[0].buffer, dtype=np.uint8).__array_interface__["data"][0]
    np.ctypeslib.as_array((ctypes.c_float * N).from_address(address))[:] = 9.0


def make_buffer(worker, backend, access):
    """A buffer of N float32 filled with 1.0; FORK_* ones are created before init()."""
    h = create_buffer(N * 4, access, backend)
    worker._buffers.append(h)
    fill_owner(h, 1.0)
    return h


def fill_owner(h, value):
    """The owner fills its own bytes: its array is writable whatever the buffer grants."""
    h.array((N,), DataType.FLOAT32)[:] = value


def owner_bytes(h):
    return np.array(h.array((N,), DataType.FLOAT32), copy=True)


CASES = [
    (BackendKind.POSIX_SHM, AccessMode.READ),
    (BackendKind.POSIX_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_SHM, AccessMode.READ),
    (BackendKind.FORK_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_COW, AccessMode.READ),
]


@pytest.mark.parametrize("backend,access", CASES, ids=lambda v: v.name if hasattr(v, "name") else str(v))
@pytest.mark.parametrize("write", [torch_write, numpy_forced_write], ids=["torch", "raw-address"])
def test_a_write_through_a_read_only_argument_fails_the_run_and_never_lands(backend, access, write):
    if write is torch_write:
        require_torch()  # here: in the sub-worker a missing torch would be the task's failure
    w = Worker(level=3, num_sub_workers=1)
    try:
        h = w.register(write)
        buf = make_buffer(w, backend, access)
        before = owner_bytes(buf)
        w.init()
        t = buf.tensor((N,), DataType.FLOAT32)
        with pytest.raises(RuntimeError) as info:
            w.run(lambda o, a, c: o.submit_sub(h, args((t, TensorArgType.INPUT))))
        msg = str(info.value)
        assert f"write to read-only bytes of buffer {buf.identity}" in msg
        assert f"({backend.name}, grants {access.name}" in msg
        if access != AccessMode.READ:
            assert "an INPUT argument is mapped read-only" in msg
        assert "was ended" in msg and "sub-worker 0" in msg
        np.testing.assert_array_equal(owner_bytes(buf), before)
    finally:
        close_and_check(w)


@pytest.mark.parametrize("write,match", [(numpy_write, "read-only"), (memoryview_write, "read-only")])
def test_numpy_and_memoryview_refuse_an_input_view_of_a_writable_buffer(write, match):
    w = Worker(level=3, num_sub_workers=1)
    try:
        h = w.register(write)
        w.init()
        buf = w.create_buffer(N * 4)
        view_array(buf.tensor((N,), DataType.FLOAT32))[...] = 1.0
        with pytest.raises(RuntimeError, match=match) as info:
            w.run(lambda o, a, c: o.submit_sub(h, args((buf.tensor((N,), DataType.FLOAT32), TensorArgType.INPUT))))
        assert (
            f"read-only arguments of this task: argument 0: buffer {buf.identity} (POSIX_SHM, grants READWRITE; "
            "not written by this task (INPUT), so mapped read-only)"
        ) in str(info.value)
        assert (view_array(buf.tensor((N,), DataType.FLOAT32)) == 1.0).all()
    finally:
        close_and_check(w)


def test_an_output_view_stays_writable_next_to_an_input_view_of_the_same_buffer():
    def copy_half(a):
        a.array(1)[...] = a.array(0) + 1

    w = Worker(level=3, num_sub_workers=1)
    try:
        h = w.register(copy_half)
        w.init()
        buf = w.create_buffer(2 * N * 4)
        view_array(buf.tensor((2 * N,), DataType.FLOAT32))[...] = 1.0
        lo = buf.tensor((N,), DataType.FLOAT32)
        hi = buf.tensor((N,), DataType.FLOAT32, byte_offset=N * 4)
        w.run(lambda o, a, c: o.submit_sub(h, args((lo, TensorArgType.INPUT), (hi, TensorArgType.OUTPUT_EXISTING))))
        assert (view_array(hi) == 2.0).all() and (view_array(lo) == 1.0).all()
    finally:
        close_and_check(w)


# -- forged descriptors ------------------------------------------------------


def touch(a):
    a.array(0)[...] = 7.0


def forged(d, *, identity=None, access=None, nbytes=None):
    """d with some fields replaced: a descriptor no owner handed out."""
    identity = identity or d.identity
    access = d.access if access is None else access
    nbytes = nbytes or d.nbytes
    if d.backend_kind in (BackendKind.FORK_SHM, BackendKind.FORK_COW):
        return BufferDescriptor.for_address(identity, d.backend_kind, access, nbytes, d.address)
    return BufferDescriptor(identity, d.backend_kind, access, nbytes, bytes(d.body)[: d.body_len])


def read_only_sum(a):
    assert float(a.array(0).sum()) == N


def test_an_invented_identity_over_a_real_shm_name_is_refused_at_submit():
    w = Worker(level=3, num_sub_workers=1)
    try:
        h = w.register(touch)
        w.init()
        buf = w.create_buffer(N * 4)
        view_array(buf.tensor((N,), DataType.FLOAT32))[...] = 1.0
        real = buf.descriptor
        fakes = {
            "another owner's nonce": CanonicalIdentity(os.urandom(8), 1, 1),
            "a buffer_id never minted": CanonicalIdentity(real.identity.owner_instance_id, 999, 1),
            "a future generation": CanonicalIdentity(real.identity.owner_instance_id, real.identity.buffer_id, 7),
        }
        for what, ident in fakes.items():
            t = Tensor(forged(real, identity=ident), (N,), DataType.FLOAT32)
            with pytest.raises(ValueError) as info:
                w.run(lambda o, a, c, t=t: o.submit_sub(h, args((t, TensorArgType.OUTPUT_EXISTING))))
            msg = str(info.value)
            assert "submit of task" in msg and "member 0, argument 0" in msg and str(ident) in msg, what
            assert (view_array(buf.tensor((N,), DataType.FLOAT32)) == 1.0).all(), what
        # a closed buffer's descriptor: refused too
        gone = w.create_buffer(N * 4)
        t = gone.tensor((N,), DataType.FLOAT32)
        gone.close()
        with pytest.raises(ValueError, match="was released"):
            w.run(lambda o, a, c: o.submit_sub(h, args((t, TensorArgType.OUTPUT_EXISTING))))
    finally:
        close_and_check(w)


@pytest.mark.parametrize("backend", [BackendKind.POSIX_SHM, BackendKind.FORK_SHM])
def test_a_forged_grant_or_size_is_refused_at_submit(backend):
    w = Worker(level=3, num_sub_workers=1)
    try:
        h = w.register(touch)
        r = w.register(read_only_sum)
        buf = create_buffer(N * 4, AccessMode.READ, backend)
        w._buffers.append(buf)
        fill_owner(buf, 1.0)
        w.init()
        real = buf.descriptor
        rw = Tensor(forged(real, access=AccessMode.READWRITE), (N,), DataType.FLOAT32)
        with pytest.raises(ValueError, match=r"argument 0, buffer .*grants READWRITE, but its owner granted READ"):
            w.run(lambda o, a, c: o.submit_sub(h, args((rw, TensorArgType.OUTPUT_EXISTING))))
        big = Tensor(forged(real, nbytes=2 * N * 4), (N,), DataType.FLOAT32)
        with pytest.raises(ValueError, match="disagrees with its owner's record"):
            w.run(lambda o, a, c: o.submit_sub(h, args((big, TensorArgType.INPUT))))
        assert (buf.array((N,), DataType.FLOAT32) == 1.0).all()
        # the real descriptor still runs (a READ grant, an INPUT tag)
        w.run(lambda o, a, c: o.submit_sub(r, args((buf.tensor((N,), DataType.FLOAT32), TensorArgType.INPUT))))
    finally:
        close_and_check(w)


# -- chips -------------------------------------------------------------------

SCRIBBLE = Path(__file__).parent / "chip_sources" / "write_input.cpp"


@pytest.mark.parametrize("access", [AccessMode.READ, AccessMode.READWRITE], ids=lambda a: a.name)
def test_a_zero_copy_kernel_writing_a_read_only_argument_fails_the_run_and_never_lands(access):
    w = Worker(level=3, num_chips=1, zero_copy=True, task_timeout=30)
    try:
        scribble = w.register(ChipCallable.from_source(SCRIBBLE, "grants.scribble"))
        buf = make_buffer(w, BackendKind.FORK_SHM, access)
        w.init()
        t = buf.tensor((N,), DataType.FLOAT32)
        with pytest.raises(RuntimeError) as info:
            w.run(lambda o, a, c: o.submit_next_level(scribble, args((t, TensorArgType.INPUT)), worker=0))
        msg = str(info.value)
        assert f"write to read-only bytes of buffer {buf.identity} (FORK_SHM, grants {access.name}" in msg
        assert "on chip 0 failed" in msg and "chip 0 was ended" in msg
        np.testing.assert_array_equal(owner_bytes(buf), np.ones(N, dtype=np.float32))
    finally:
        close_and_check(w)


def test_a_chained_zero_copy_kernel_writing_a_read_only_argument_fails_through_its_own_slot(tmp_path):
    """The scribble task waits on chip 0's lane behind a gate task (it reads what the gate writes), so
    it runs from the lane's second slot: the fault handler answers through the slot being served."""
    w = Worker(level=3, num_chips=1, zero_copy=True, task_timeout=30)
    try:
        scribble = w.register(ChipCallable.from_source(SCRIBBLE, "grants.scribble"))
        gate_k = w.register(kernel_callable("test.gate"))
        buf = make_buffer(w, BackendKind.FORK_SHM, AccessMode.READWRITE)
        w.init()
        t = buf.tensor((N,), DataType.FLOAT32)

        def orch(o, _a, _c):
            g = Gate(w, tmp_path, hold=t)  # writes t (leaves its bytes): the scribble task reads it
            g.submit(o, gate_k)
            o.submit_next_level(scribble, args((t, TensorArgType.INPUT)), worker=0)
            g.open()

        with pytest.raises(RuntimeError) as info:
            w.run(orch)
        msg = str(info.value)
        assert f"write to read-only bytes of buffer {buf.identity} (FORK_SHM, grants READWRITE" in msg, msg
        assert "(callable 'grants.scribble', member 0) on chip 0 failed" in msg and "chip 0 was ended" in msg, msg
        np.testing.assert_array_equal(owner_bytes(buf), np.ones(N, dtype=np.float32))
    finally:
        close_and_check(w)
