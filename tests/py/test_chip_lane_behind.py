"""A ready task for a busy chip waits on the chip's lane, not in the parent: the
chip begins it as soon as it finishes the task it runs, with no hand-off
through the parent between them (the chip's lane holds four tasks).

A test.gate task that waits for a file holds chip 0; the orch fn then submits
a task that needs nothing of the gate (std.add_scalar x -> y, on bytes the
gate does not name) to chip 0: submit drives the lanes, so the trace shows it
published before the gate's result was collected. It runs whatever the gate
did (no producer of it is on the lane), a cancel withdraws it while the chip
has not begun it, and a chip killed with both on its lane fails both. Both
spin regimes are run."""

import os
import signal
import struct

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from simpler.runtime.trace import intervals
from worker_helpers import Gate, args, closing, interrupted_behind_gate, kernel_callable  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 16
ONE = struct.unpack("<I", struct.pack("<f", 1.0))[0]  # std.add_scalar's scalar: the f32 bits


def gated(closing, tmp_path, spin, gate_ms=10_000):
    """A traced Worker of 2 chips, its std.add_scalar and test.gate handles, a Gate on a buffer
    of its own, and x (0..15), y (-1) in another buffer."""
    w = Worker(level=3, num_chips=2, task_timeout=30, spin=spin, trace=True)
    closing(w)
    add = w.register(ChipCallable("std.add_scalar"))
    gate_k = w.register(kernel_callable("test.gate"))
    w.init()
    buf = w.create_buffer(2 * N * 4)
    x, y = buf.tensor((N,), F32), buf.tensor((N,), F32, byte_offset=N * 4)
    view_array(x)[...] = np.arange(N, dtype=np.float32)
    view_array(y)[...] = -1
    return w, add, gate_k, Gate(w, tmp_path, timeout_ms=gate_ms), x, y


def gate_then_add(gate, gate_k, add, x, y, then=None):
    """An orch fn: the gate on chip 0, then y = x + 1 on chip 0 (it needs nothing of the gate),
    then then(gate); and the dict that receives both handles."""
    handles = {}

    def orch(o, _a, _c):
        handles["gate"] = gate.submit(o, gate_k)
        handles["add"] = o.submit_next_level(add, args((x, IN), (y, OUT), scalars=(ONE,)), worker=0)
        if then is not None:
            then(gate)

    return orch, handles


def runs_of(w, handles):
    by_task = {i.task.id: i for i in intervals(w.trace_events()) if i.lane == "chip 0"}
    return by_task[handles["gate"].id], by_task[handles["add"].id]


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_ready_task_for_a_busy_chip_waits_on_its_lane_and_runs_after_the_one_ahead(closing, tmp_path, spin):
    w, add, gate_k, gate, x, y = gated(closing, tmp_path, spin)
    orch, handles = gate_then_add(gate, gate_k, add, x, y, then=Gate.open)
    w.run(orch)
    np.testing.assert_array_equal(view_array(y), np.arange(N, dtype=np.float32) + 1)
    g, a = runs_of(w, handles)
    assert g.ok and a.ok, (g, a)
    # published before the gate's result was collected: it waited on the chip, not in the parent
    assert a.start_ns < g.end_ns, (g, a)
    assert all(not s.lost and not s.below_lost for s in w.child_status())


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_failure_ahead_on_the_lane_does_not_touch_a_task_that_needs_nothing_of_it(closing, tmp_path, spin):
    w, add, gate_k, gate, x, y = gated(closing, tmp_path, spin, gate_ms=300)  # never opened: fails
    orch, handles = gate_then_add(gate, gate_k, add, x, y)
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 0 failed" in msg and "never appeared" in msg, msg
    np.testing.assert_array_equal(view_array(y), np.arange(N, dtype=np.float32) + 1)  # it ran
    g, a = runs_of(w, handles)
    assert not g.ok and a.ok and a.start_ns < g.end_ns, (g, a)
    assert all(not s.lost and not s.below_lost for s in w.child_status())


@pytest.mark.parametrize("spin", [None, 0.0])
def test_ctrl_c_withdraws_a_ready_task_its_busy_chip_has_not_begun(closing, tmp_path, spin):
    """Ctrl-C in the orch fn while the gate runs on chip 0 with the add already on chip 0's lane
    behind it: the add is withdrawn and counted among the cancelled; the gate finishes."""
    w, add, gate_k, gate, x, y = gated(closing, tmp_path, spin)
    gates = []

    def interrupt(g):
        gates.append(g)
        raise KeyboardInterrupt

    orch, handles = gate_then_add(gate, gate_k, add, x, y, then=interrupt)
    interrupted_behind_gate(w, orch, cancelled=1)
    gates[0].open()
    w.run(lambda o, _a, _c: None)  # waits for the gate
    g, a = runs_of(w, handles)
    assert g.ok and a.start_ns < g.end_ns, (g, a)  # the add was on the lane behind the gate
    assert not a.ok and "its parent withdrew it before it started" in a.error, a
    np.testing.assert_array_equal(view_array(y), np.full(N, -1, dtype=np.float32))  # it never ran
    assert all(not s.lost and not s.below_lost for s in w.child_status())


def test_a_chip_killed_with_a_ready_task_behind_the_one_it_runs_fails_both(closing, tmp_path):
    w, add, gate_k, gate, x, y = gated(closing, tmp_path, None)
    chip0 = w.child_pids()[0]
    orch, handles = gate_then_add(gate, gate_k, add, x, y, then=lambda _g: os.kill(chip0, signal.SIGKILL))
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 0" in msg and "CHILD_DIED" in msg and "signal 9" in msg, msg
    g, a = runs_of(w, handles)
    assert a.start_ns < g.end_ns, (g, a)  # both were in flight on chip 0
    assert not g.ok and "CHILD_DIED" in g.error, g
    assert not a.ok and "CHILD_DIED" in a.error, a  # a failure of its own: it needed nothing of the gate
    np.testing.assert_array_equal(view_array(y), np.full(N, -1, dtype=np.float32))
    status = w.child_status()
    assert status[0].lost and str(status[1]) == "chip 1: usable", status
    w.run(lambda o, _a, _c: o.submit_next_level(add, args((x, IN), (y, OUT), scalars=(ONE,)), worker=1))
    np.testing.assert_array_equal(view_array(y), np.arange(N, dtype=np.float32) + 1)  # chip 1 serves it
