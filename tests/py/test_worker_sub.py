"""The Worker with Python sub-workers, end to end: a sub task computes on
exactly its view's bytes; a READ grant is read-only in the sub-worker; disjoint
slices run concurrently; an exception comes back with its type, message and
traceback and its successors do not run; a sub-worker killed mid-task is an
error, not a hang; DEVICE tensors never reach a sub-worker; close() leaves no
child and no /dev/shm object."""

import os
import signal
import time

import numpy as np
import pytest

from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    TaskArgs,
    Tensor,
    TensorArgType,
    Worker,
    view_array,
)
from worker_helpers import args, close_and_check

N = 16


@pytest.fixture
def worker():
    w = Worker(level=3, num_sub_workers=2)
    yield w
    close_and_check(w)


def scale(a):
    """out = a * scalar[0]"""
    a.array(1)[...] = a.array(0) * a.scalars[0]


def stamp(a):
    """Records [start, end] (monotonic ns) in its own (disjoint) view, sleeping between."""
    out = a.array(0)
    out[0] = time.monotonic_ns()
    time.sleep(0.3)
    out[1] = time.monotonic_ns()


def write_readonly(a):
    a.array(0)[0] = 1.0


def boom(a):
    raise KeyError("boom")


def die(a):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_sub_task_computes_on_exactly_its_view(worker):
    h = worker.register(scale)
    worker.init()
    src = worker.create_buffer(N * N * 4)
    dst = worker.create_buffer(N * N * 4)
    view_array(src.tensor((N, N), DataType.FLOAT32))[...] = np.arange(N * N, dtype=np.float32).reshape(N, N)
    view_array(dst.tensor((N, N), DataType.FLOAT32))[...] = -1
    # the transposed column block 4..8 of src, into rows 4..8 of dst
    src_view = src.tensor((4, N), DataType.FLOAT32, strides=(1, N), byte_offset=4 * 4)
    dst_view = dst.tensor((4, N), DataType.FLOAT32, byte_offset=4 * N * 4)

    def orch(o, _args, _cfg):
        o.submit_sub(h, args((src_view, TensorArgType.INPUT), (dst_view, TensorArgType.OUTPUT_EXISTING), scalars=(3,)))

    worker.run(orch)
    expected = np.full((N, N), -1, dtype=np.float32)
    expected[4:8, :] = 3 * np.arange(N * N, dtype=np.float32).reshape(N, N)[:, 4:8].T
    np.testing.assert_array_equal(view_array(dst.tensor((N, N), DataType.FLOAT32)), expected)


def test_disjoint_slices_run_concurrently_on_two_sub_workers(worker):
    h = worker.register(stamp)
    worker.init()
    buf = worker.create_buffer(4 * 8)
    left = buf.tensor((2,), DataType.INT64)
    right = buf.tensor((2,), DataType.INT64, byte_offset=16)

    def orch(o, _a, _c):
        o.submit_sub(h, args((left, TensorArgType.OUTPUT_EXISTING)))
        o.submit_sub(h, args((right, TensorArgType.OUTPUT_EXISTING)))

    worker.run(orch)
    (s0, e0), (s1, e1) = view_array(left), view_array(right)
    assert s1 < e0 and s0 < e1, "disjoint slices must overlap in time"


def test_a_read_grant_is_read_only_in_the_sub_worker(worker):
    h = worker.register(write_readonly)
    worker.init()
    ro = worker.create_buffer(64, access=AccessMode.READ)

    def orch(o, _a, _c):
        o.submit_sub(h, args((ro.tensor((16,), DataType.FLOAT32), TensorArgType.INPUT)))

    with pytest.raises(RuntimeError, match="read-only"):
        worker.run(orch)


def test_an_exception_comes_back_with_type_message_and_traceback_and_poisons_successors(worker):
    bad = worker.register(boom)
    after = worker.register(scale)
    worker.init()
    buf = worker.create_buffer(64)
    out = worker.create_buffer(64)
    view_array(out.tensor((16,), DataType.FLOAT32))[...] = 7

    def orch(o, _a, _c):
        o.submit_sub(bad, args((buf.tensor((16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)))
        o.submit_sub(
            after,
            args(
                (buf.tensor((16,), DataType.FLOAT32), TensorArgType.INPUT),
                (out.tensor((16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING),
                scalars=(0,),
            ),
        )

    with pytest.raises(RuntimeError) as info:
        worker.run(orch)
    msg = str(info.value)
    assert "sub task 1" in msg and "sub-worker" in msg
    assert "Traceback" in msg and "KeyError: 'boom'" in msg and "in boom" in msg
    assert "1 dependent task(s) were not run" in msg
    assert (view_array(out.tensor((16,), DataType.FLOAT32)) == 7).all(), "a poisoned successor ran"


def test_a_sub_worker_killed_mid_task_is_an_error_not_a_hang(worker):
    h = worker.register(die)
    worker.init()
    buf = worker.create_buffer(64)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"CHILD_DIED.*signal 9"):
        worker.run(lambda o, a, c: o.submit_sub(h, args((buf.tensor((16,), DataType.FLOAT32), TensorArgType.INOUT))))
    assert time.monotonic() - t0 < 10
    assert any(s.lost for s in worker.child_status())


def test_a_sub_group_larger_than_the_live_sub_workers_is_refused_naming_the_lost_one(worker):
    h = worker.register(scale)
    worker.init()
    victim = worker.child_pids()[1]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while not any(s.lost for s in worker.child_status()):  # the watcher reports the death
        assert time.monotonic() < deadline, worker.child_status()
        time.sleep(0.005)
    buf = worker.create_buffer(64)
    t = buf.tensor((16,), DataType.FLOAT32)
    with pytest.raises(ValueError) as e:
        worker.run(lambda o, a, c: o.submit_sub_group(h, [args((t, TensorArgType.INOUT), scalars=(1,))] * 2))
    msg = str(e.value)
    assert "submit of task" in msg and "needs 2 sub-worker(s) at once" in msg, msg
    assert "sub-worker 1" in msg and "killed by signal 9" in msg, msg


def test_device_tensors_never_reach_a_sub_worker(worker):
    h = worker.register(scale)
    worker.init()
    dev = BufferDescriptor.for_address(
        CanonicalIdentity(b"\x01" * 8, 1, 1), BackendKind.DEVICE_MALLOC, AccessMode.READWRITE, 64, 0x1000
    )
    with pytest.raises(ValueError, match="sub-worker takes HOST tensors only"):
        worker.run(lambda o, a, c: o.submit_sub(h, args((Tensor(dev, (16,), DataType.FLOAT32), TensorArgType.INPUT))))


def test_callables_registered_before_or_after_init_are_checked_at_submit(worker):
    h = worker.register(scale)
    worker.init()
    again = worker.register(scale)  # after init(): installed in the sub-workers, a handle of its own
    assert (h.id, again.id) == (0, 1)
    with pytest.raises(TypeError, match="expected a handle"):
        worker.run(lambda o, a, c: o.submit_sub(scale, TaskArgs()))
    with pytest.raises(ValueError, match=r"next-level workers|NEXT_LEVEL"):
        worker.run(lambda o, a, c: o.submit_next_level(h, TaskArgs(), worker=0))
