"""How long a Worker's processes live: the children die with the owner
*process* (not with the thread that called init()), so init() from a thread
that then exits leaves a working Worker; an owner killed by SIGKILL, SIGTERM or
os._exit leaves no child and no /dev/shm object behind."""

import gc
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
            o.submit_next_level(
                vadd,
                args((a.tensor((N,), F32), IN), (b.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT)),
                worker=chip,
            )
            o.submit_sub(tri, args((c.tensor((N,), F32), IN), (d.tensor((N,), F32), OUT)))
            o.submit_sub(tri, args((a.tensor((N,), F32), IN), (b.tensor((N,), F32), OUT)))

        w.run(orch)
        np.testing.assert_array_equal(view_array(c.tensor((N,), F32)), np.arange(N, dtype=np.float32) + 10)
        np.testing.assert_array_equal(view_array(d.tensor((N,), F32)), 3 * (np.arange(N, dtype=np.float32) + 10))
        view_array(b.tensor((N,), F32))[...] = 10
    assert all(not s.lost and not s.below_lost for s in w.child_status()), w.child_status()


def test_a_worker_dropped_without_close_is_collected_and_stops_its_children():
    # The thread that logs losses (simpler/runtime/log.py) waits on the Worker's status
    # channel by id: it kept the engine alive, and with it every child, until exit.
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    w.init()
    pids = w.child_pids()
    follower = w._state.watch._follower
    assert follower is not None and follower.is_alive()
    del w
    gc.collect()
    assert wait_gone(pids, 30) == []
    follower.join(30)
    assert not follower.is_alive()


OWNER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {tests!r})
    from simpler import ChipCallable, Worker, create_buffer
    from simpler._core import shm_tracker_pid
    w = Worker(level=3, num_chips=2, num_sub_workers=1)
    w.register(ChipCallable("std.noop"))
    w.register(print)
    w.init()
    bufs = [w.create_buffer(1 << 16) for _ in range(3)] + [create_buffer(4096)]
    for b in bufs:
        b.shm.buf[:4] = b"live"
    prefix = bufs[0].descriptor.body.decode()[:18]
    print(prefix, shm_tracker_pid(), " ".join(str(p) for p in w.child_pids()), flush=True)
    if {how!r} == "exit":
        sys.stdin.readline()  # the test has seen every process alive
        os._exit(3)
    time.sleep(120)
""")


def own_shm(prefix: str) -> list:
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(prefix))


def wait_shm_gone(prefix: str, bound_s: float = 30.0) -> list:
    """The objects named `prefix`* still in /dev/shm after waiting up to bound_s for them to go."""
    deadline = time.monotonic() + bound_s
    left = own_shm(prefix)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = own_shm(prefix)
    return left


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "exit"])
def test_an_owner_that_dies_leaves_no_child_no_tracker_and_no_shm_object(how):
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(tests=os.path.dirname(__file__), how=how)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        prefix, tracker, *children = proc.stdout.readline().split()
        pids = [int(tracker)] + [int(p) for p in children]
        assert len(pids) == 4 and all(alive(p) for p in pids), (prefix, pids)
        assert len(own_shm(prefix)) == 4
        if how == "exit":
            proc.stdin.write("exit\n")
            proc.stdin.flush()
        else:
            proc.send_signal(getattr(signal, how))
        assert proc.wait(30) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
        proc.stdin.close()
    assert wait_gone(pids, 30) == [], "a child or the tracker outlived its owner"
    assert wait_shm_gone(prefix) == [], "the owner's /dev/shm objects outlived it"


def test_the_tracker_is_no_child_of_its_owner_and_a_killed_tracker_is_replaced(closing):
    from simpler import create_buffer
    from simpler._core import shm_tracker_pid

    with create_buffer(64):
        tracker = shm_tracker_pid()
    assert tracker > 0 and alive(tracker)
    with open(f"/proc/{tracker}/stat") as f:
        assert int(f.read().rsplit(")", 1)[1].split()[1]) != os.getpid(), "the tracker is a child of its owner"
    os.kill(tracker, signal.SIGKILL)
    assert wait_gone([tracker], 30) == []
    with create_buffer(64) as b:  # a new tracker, told about the live names
        assert shm_tracker_pid() not in (-1, tracker)
        assert os.path.exists(f"/dev/shm/{b.descriptor.body.decode()}")
