"""A chain of dependent tasks alternating between two chips (issue 64), end to end:
each task reads what the one before wrote on the other chip, so the final bytes
prove the order. With Worker(chip_conditions=True) a
task whose producer still runs on the other chip goes to its own chip at once
and waits there on the lane board; the trace proves it (published before its
producer's result was collected). A failing producer and a producer chip
killed while its consumer waits end the run with the report they give when the
dependency waits in the parent, and nothing hangs. The trace shows each such wait as the edge it is.

The chain is std.add_scalar alternating x -> y on chip 0 and y -> x on chip 1
over 16 FLOAT32 elements starting at 0..15: after n tasks (n even) x holds
i + n and y holds i + n - 1, exactly."""

import os
import signal
import struct
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from simpler.runtime.trace import chrome_trace, intervals
from worker_helpers import Gate, alive, args, closing, fail_cause, kernel_callable  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 16
ONE = struct.unpack("<I", struct.pack("<f", 1.0))[0]  # std.add_scalar's scalar: the f32 bits


def cross_worker(closing, spin=None, chip_conditions=True):
    """Two chips, traced, with std.add_scalar, test.gate and test.fail registered, initialized:
    (w, add, gate kernel, fail kernel, x, y)."""
    w = Worker(level=3, num_chips=2, spin=spin, trace=True, chip_conditions=chip_conditions)
    closing(w)
    add = w.register(ChipCallable("std.add_scalar"))
    gate_k = w.register(kernel_callable("test.gate"))
    fail_k = w.register(kernel_callable("test.fail"))
    w.init()
    buf = w.create_buffer(2 * N * 4)
    x, y = buf.tensor((N,), F32), buf.tensor((N,), F32, byte_offset=N * 4)
    view_array(x)[...] = np.arange(N, dtype=np.float32)
    view_array(y)[...] = -1
    return w, add, gate_k, fail_k, x, y


def submit_across(o, add, x, y, n):
    """n dependent add-one tasks: x -> y on chip 0, y -> x on chip 1, ... (n even: the last writes x)."""
    there, back = args((x, IN), (y, OUT), scalars=(ONE,)), args((y, IN), (x, OUT), scalars=(ONE,))
    for i in range(n):
        o.submit_next_level(add, back if i & 1 else there, None, worker=i & 1)


def assert_chain_ran(x, y, n):
    want = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(view_array(x), want + n)
    np.testing.assert_array_equal(view_array(y), want + n - 1)


def runs_of(w):
    """Every RUN interval of the trace, by task id."""
    return {i.task.id: i for i in intervals(w.trace_events())}


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_chain_across_two_chips_ends_with_every_task_applied_in_order(closing, spin):
    w, add, _g, _f, x, y = cross_worker(closing, spin)
    n = 2_000
    w.run(lambda o, _a, _c: submit_across(o, add, x, y, n))
    assert_chain_ran(x, y, n)
    w.run(lambda o, _a, _c: submit_across(o, add, x, y, n))  # and again, from where it stopped
    assert_chain_ran(x, y, 2 * n)
    assert all(not s.lost and not s.below_lost for s in w.child_status())


@pytest.mark.parametrize("chip_conditions", [True, False])
def test_a_consumer_waits_on_its_own_chip_only_with_chip_conditions(closing, tmp_path, chip_conditions):
    w, add, gate_k, _f, x, y = cross_worker(closing, chip_conditions=chip_conditions)
    handles = {}

    def orch(o, _a, _c):
        g = Gate(w, tmp_path, hold=x)
        handles["gate"] = g.submit(o, gate_k, chip=1)  # writes x (leaves its bytes) on chip 1
        submit_across(o, add, x, y, 2)  # the first reads x on chip 0
        g.open()

    w.run(orch)
    assert_chain_ran(x, y, 2)
    runs = runs_of(w)
    gate, first = runs[handles["gate"].id], runs[handles["gate"].id + 1]
    assert gate.lane == "chip 1" and first.lane == "chip 0", (gate, first)
    # With conditions it was published before its producer's result was collected; without, after.
    assert (first.start_ns < gate.end_ns) == chip_conditions, (gate, first)
    # The trace shows the wait as the edge it is: the consumer's event names its producer, and the
    # Chrome trace draws an arrow from the producer's RUN to the consumer's.
    events = w.trace_events()
    waits = {e.task.id: tuple(e.waits_on) for e in events if e.phase.name == "RUN"}
    second = first.task.id + 1  # on chip 1, reading what the first wrote on chip 0
    want = {gate.task.id: (), first.task.id: (gate.task.id,), second: (first.task.id,)}
    assert waits == (want if chip_conditions else dict.fromkeys(want, ())), waits
    chrome = chrome_trace(events, num_chips=2)["traceEvents"]
    flows = [e for e in chrome if e.get("cat") == "waits_on"]
    consumer = next(e for e in chrome if e.get("ph") == "X" and e["args"]["task"] == first.task.id)
    if chip_conditions:
        assert [f["ph"] for f in flows] == ["s", "f", "s", "f"], flows
        assert consumer["args"]["waits_on"] == [gate.task.name()], consumer
    else:
        assert flows == [] and "waits_on" not in consumer["args"], (flows, consumer)


def failing_run(closing, tmp_path, chip_conditions):
    """A producer on chip 1 that fails with its consumer already submitted on chip 0, then 10 more
    chained tasks: the run's error text, after checking nothing of the chain ran."""
    w, add, gate_k, fail_k, x, y = cross_worker(closing, chip_conditions=chip_conditions)

    def orch(o, _a, _c):
        g = Gate(w, tmp_path)
        g.submit(o, gate_k, chip=1)  # keeps the failing producer in flight until everything is submitted
        o.submit_next_level(fail_k, args((g.hold, IN), (x, OUT)), worker=1)
        submit_across(o, add, x, y, 10)  # the first, on chip 0, reads x
        g.open()

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    np.testing.assert_array_equal(view_array(x), np.arange(N, dtype=np.float32))
    np.testing.assert_array_equal(view_array(y), np.full(N, -1, dtype=np.float32))
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    w.run(lambda o, _a, _c: submit_across(o, add, x, y, 2))  # both chips still serve the chain
    assert_chain_ran(x, y, 2)
    return str(info.value)


def test_a_failing_producer_on_the_other_chip_fails_the_run_as_it_does_through_the_parent(closing, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    msg = failing_run(closing, tmp_path / "a", True)
    assert "(callable 'test.fail', member 0) on chip 1" in msg and fail_cause() in msg, msg
    assert "10 dependent task(s) were not run" in msg, msg
    assert msg == failing_run(closing, tmp_path / "b", False)


def test_a_producer_chip_killed_while_its_consumer_waits_fails_the_run_and_leaves_nothing(closing, tmp_path):
    w, add, gate_k, _f, x, y = cross_worker(closing)
    chip1 = w.child_pids()[1]
    handles = {}

    def orch(o, _a, _c):
        g = Gate(w, tmp_path, hold=x)
        handles["gate"] = g.submit(o, gate_k, chip=1)  # never opened: chip 1 dies in it
        submit_across(o, add, x, y, 10)
        os.kill(chip1, signal.SIGKILL)

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    assert time.monotonic() - t0 < 8, "the run waited for the killed chip's task"
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 1" in msg and "CHILD_DIED" in msg and "signal 9" in msg, msg
    assert "10 dependent task(s) were not run" in msg, msg
    runs = runs_of(w)
    first = runs[handles["gate"].id + 1]
    assert first.lane == "chip 0" and not first.ok, first  # it waited on chip 0 and never ran
    np.testing.assert_array_equal(view_array(y), np.full(N, -1, dtype=np.float32))
    status = w.child_status()
    assert status[1].lost and "signal 9" in status[1].why and str(status[0]) == "chip 0: usable", status
    assert not alive(chip1)
    there = args((x, IN), (y, OUT), scalars=(ONE,))
    w.run(lambda o, _a, _c: o.submit_next_level(add, there, None, worker=0))  # chip 0 still serves
    np.testing.assert_array_equal(view_array(y), np.arange(N, dtype=np.float32) + 1)
