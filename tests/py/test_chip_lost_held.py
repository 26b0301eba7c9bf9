"""A member the Worker took for a chip's lane while a control message (a
forget) waited on that lane is held in the parent until the chip answers; a
chip killed before it answers fails the member, and the trace says so: a RUN
event that failed, like any member that was never published. A group whose
other member ran on another chip is then a failed task in the trace (some of
its output written), never one that did not run (chaos seed 424375: a model
reading the trace took such a group's written output for untouched bytes).

The interleaving is made, not hoped for: chip 0 is stopped (SIGSTOP) before a
release sends every lane a forget, so it cannot answer; the group's member on
chip 1 runs once chip 1 has answered, and chip 0 is killed only after that
member's output is in place. Both spin regimes are run."""

import os
import signal
import struct
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from worker_helpers import args, closing  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 16
ONE = struct.unpack("<I", struct.pack("<f", 1.0))[0]  # std.add_scalar's scalar: the f32 bits
BOUND_S = 20.0  # how long chip 1's member may take to write its output (a hang bound, not a timing)


def wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while not cond():
        assert time.monotonic() < deadline, f"{what} did not happen within {BOUND_S:.0f} s"
        time.sleep(0.005)


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_group_member_held_behind_a_forget_fails_in_the_trace_when_its_chip_dies(closing, spin):
    w = Worker(level=3, num_chips=2, task_timeout=60, spin=spin, trace=True)
    closing(w)
    add = w.register(ChipCallable("std.add_scalar"))
    w.init()
    buf = w.create_buffer(4 * N * 4)
    x0, y0, x1, y1 = (buf.tensor((N,), F32, byte_offset=k * N * 4) for k in range(4))
    for x in (x0, x1):
        view_array(x)[...] = np.arange(N, dtype=np.float32)
    for y in (y0, y1):
        view_array(y)[...] = -1
    chip0 = w.child_pids()[0]
    gone = w.create_buffer(64)
    os.kill(chip0, signal.SIGSTOP)
    try:
        w.release_buffer(gone)  # no task names it: freed now, and forgotten on every lane
        handles = {}

        def orch(o, _a, _c):
            handles["group"] = o.submit_next_level_group(
                add,
                [args((x0, IN), (y0, OUT), scalars=(ONE,)), args((x1, IN), (y1, OUT), scalars=(ONE,))],
                workers=[0, 1],
            )

        future = w.submit(orch)
        wait_for(lambda: (view_array(y1) == np.arange(N, dtype=np.float32) + 1).all(), "chip 1's member")
    finally:
        os.kill(chip0, signal.SIGKILL)
    with pytest.raises(RuntimeError) as info:
        future.result()
    msg = str(info.value)
    assert "chip 0" in msg and ("signal 9" in msg or "CHILD_DIED" in msg), msg
    task = handles["group"]
    runs = sorted((e for e in w.trace_events() if e.phase.name == "RUN" and e.task == task), key=lambda e: e.member)
    assert [(e.member, e.child.name(), e.ok) for e in runs] == [(0, "chip 0", False), (1, "chip 1", True)], runs
    assert "chip 0" in runs[0].error or "gone" in runs[0].error, runs[0].error
    # what ran of the group wrote its output; the held member wrote nothing
    np.testing.assert_array_equal(view_array(y1), np.arange(N, dtype=np.float32) + 1)
    np.testing.assert_array_equal(view_array(y0), np.full(N, -1, dtype=np.float32))
