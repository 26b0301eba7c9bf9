"""How long a Worker's processes live: the children die with the owner
*process* (not with the thread that called init()), so init() from a thread
that then exits leaves a working Worker; an owner killed by SIGKILL, SIGTERM or
os._exit leaves no child and no /dev/shm object behind."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from worker_helpers import alive, args, closing, time_bound, wait_gone  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 64


def triple(a):
    a.array(1)[...] = a.array(0) * 3


def _wait_thread_gone(native_id: int, bound_s: float = 30.0) -> None:
    """Waits until the kernel has finished the thread's exit (its /proc task entry is gone)."""
    deadline = time.monotonic() + bound_s
    while os.path.exists(f"/proc/self/task/{native_id}"):
        assert time.monotonic() < deadline, f"thread {native_id} did not exit within {bound_s} s"
        time.sleep(0.005)


def test_init_from_a_thread_that_exits_leaves_chips_and_sub_workers_working(closing):
    w = Worker(level=3, num_chips=2, num_sub_workers=2, task_timeout=30)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    tri = w.register(triple)
    t = threading.Thread(target=w.init)
    t.start()
    t.join(60)
    assert not t.is_alive()
    _wait_thread_gone(t.native_id)
    a, b, c, d = (w.create_buffer(N * 4) for _ in range(4))
    view_array(a.tensor((N,), F32))[...] = np.arange(N, dtype=np.float32)
    view_array(b.tensor((N,), F32))[...] = 10
    for chip in range(2):
        view_array(c.tensor((N,), F32))[...] = -1
        view_array(d.tensor((N,), F32))[...] = -1

        def orch(o, _a, _c, chip=chip):
            o.submit_next_level(vadd, args((a.tensor((N,), F32), IN), (b.tensor((N,), F32), IN),
                                           (c.tensor((N,), F32), OUT)), worker=chip)
            o.submit_sub(tri, args((c.tensor((N,), F32), IN), (d.tensor((N,), F32), OUT)))
            o.submit_sub(tri, args((a.tensor((N,), F32), IN), (b.tensor((N,), F32), OUT)))

        w.run(orch)
        np.testing.assert_array_equal(view_array(c.tensor((N,), F32)), np.arange(N, dtype=np.float32) + 10)
        np.testing.assert_array_equal(view_array(d.tensor((N,), F32)), 3 * (np.arange(N, dtype=np.float32) + 10))
        view_array(b.tensor((N,), F32))[...] = 10
    assert all(s.endswith(": usable") for s in w.child_status()), w.child_status()
