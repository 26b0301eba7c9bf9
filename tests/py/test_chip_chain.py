"""A chain of dependent tasks on one chip (issue 14, goal 1), end to end: each
task reads what the one before wrote, so the final bytes prove the order; a
failing task in the middle poisons its dependents and leaves the independent
tasks on the same chip alone; a chip killed mid-chain, or a chain's head past
the Worker's task_timeout, fails the run with a clear error, fails the task
chained behind it, poisons every later task of the chain and does not hang.

Chained dispatch: a task whose only unfinished producer runs on its own chip
is handed to that chip behind it (the chip's lane holds four tasks). A test.gate
task that waits for a file holds the chain's head on chip 0; the orch fn's
submit of the next task publishes it behind the gate (submit drives the lanes),
so the trace shows it handed over while the gate ran: the chained path, not the
one that waits in the parent, is what these tests exercise.

The chain is std.add_scalar alternating x -> y (y = x + 1) and y -> x
(x = y + 1) over 16 FLOAT32 elements starting at 0..15: after n tasks (n even)
x holds i + n and y holds i + n - 1, exactly (small integers are exact in
float32). Both spin regimes are run: spin=None (the chip's threads spin
between tasks) and spin=0 (every hand-off sleeps)."""

import os
import signal
import struct
import threading
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from simpler.runtime.trace import intervals
from worker_helpers import (  # noqa: F401
    Gate,
    alive,
    args,
    closing,
    fail_cause,
    interrupted_behind_gate,
    kernel_callable,
    rendezvous_dir,
)

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32, I32, I64 = DataType.FLOAT32, DataType.INT32, DataType.INT64
N = 16
ONE = struct.unpack("<I", struct.pack("<f", 1.0))[0]  # std.add_scalar's scalar: the f32 bits


def chain_worker(closing, spin=None, trace=False, task_timeout=30):
    w = Worker(level=3, num_chips=2, task_timeout=task_timeout, spin=spin, trace=trace)
    closing(w)
    add = w.register(ChipCallable("std.add_scalar"))
    return w, add


def pair(w):
    buf = w.create_buffer(2 * N * 4)
    x, y = buf.tensor((N,), F32), buf.tensor((N,), F32, byte_offset=N * 4)
    view_array(x)[...] = np.arange(N, dtype=np.float32)
    view_array(y)[...] = -1
    return x, y


def submit_chain(o, add, x, y, n, chip=0):
    """n dependent add-one tasks x -> y, y -> x, ... on `chip` (n even: the last writes x)."""
    there, back = args((x, IN), (y, OUT), scalars=(ONE,)), args((y, IN), (x, OUT), scalars=(ONE,))
    for i in range(n):
        o.submit_next_level(add, back if i & 1 else there, None, worker=chip)


def assert_chain_ran(x, y, n):
    want = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(view_array(x), want + n)
    np.testing.assert_array_equal(view_array(y), want + n - 1)


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_chain_on_one_chip_ends_with_every_task_applied_in_order(closing, spin):
    w, add = chain_worker(closing, spin)
    w.init()
    x, y = pair(w)
    n = 2_000
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, n))
    assert_chain_ran(x, y, n)
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, n))  # and again, from where it stopped
    assert_chain_ran(x, y, 2 * n)
    assert all(not s.lost and not s.below_lost for s in w.child_status())


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_failing_task_mid_chain_poisons_its_dependents_and_not_its_independents(closing, spin):
    w, add = chain_worker(closing, spin)
    fail = w.register(kernel_callable("test.fail"))
    w.init()
    x, y = pair(w)
    u, v = pair(w)  # an independent chain on the same chip
    before, after = 100, 50

    def orch(o, _a, _c):
        submit_chain(o, add, x, y, before)
        o.submit_next_level(fail, args((x, OUT)), worker=0)  # fails: nothing written back
        submit_chain(o, add, x, y, after)  # each needs the failed task's x, directly or not
        submit_chain(o, add, u, v, before + after)

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    assert time.monotonic() - t0 < 20
    msg = str(info.value)
    assert "(callable 'test.fail', member 0) on chip 0" in msg, msg
    assert "kernel 'test_fail'" in msg and fail_cause() in msg, msg
    assert f"{after} dependent task(s) were not run" in msg, msg
    assert_chain_ran(x, y, before)  # the tasks before the failure ran, none after it
    assert_chain_ran(u, v, before + after)  # the independent chain ran to its end
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2))  # the chip still serves the chain
    assert_chain_ran(x, y, before + 2)


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_chip_killed_mid_chain_fails_the_run_and_poisons_the_rest_of_the_chain(closing, spin, tmp_path):
    w, add = chain_worker(closing, spin)
    rdv = w.register(kernel_callable("test.rendezvous"))
    w.init()
    chip0 = w.child_pids()[0]
    x, y = pair(w)
    where = rendezvous_dir(w, tmp_path)
    slot = w.create_buffer(8)
    view_array(slot.tensor((2,), I32))[...] = 0
    before, after = 200, 300

    def kill_once_started():
        """SIGKILLs chip 0 once its task marked itself running (<tmp_path>/0), waiting for a partner in vain."""
        deadline = time.monotonic() + 10
        while not (tmp_path / "0").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(chip0, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_started)

    def orch(o, _a, _c):
        submit_chain(o, add, x, y, before)
        # reads x (after the chain's last write), waits 10 s for a partner: chip 0 dies in it
        o.submit_next_level(
            rdv, args((where, IN), (x, IN), (slot.tensor((2,), I32), OUT), scalars=(0, 10_000)), worker=0
        )
        submit_chain(o, add, y, x, after)  # the first writes x: after the waiting task's read (WAR), and so on
        killer.start()

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    killer.join(10)
    assert time.monotonic() - t0 < 8, "the run waited for the killed task"
    msg = str(info.value)
    assert "(callable 'test.rendezvous', member 0) on chip 0" in msg and "CHILD_DIED" in msg and "signal 9" in msg, msg
    assert f"{after} dependent task(s) were not run" in msg, msg
    assert (view_array(slot.tensor((2,), I32)) == 0).all(), "the waiting task finished before it was killed"
    assert_chain_ran(x, y, before)  # the tasks before the kill ran, none after it
    status = w.child_status()
    assert status[0].lost and "signal 9" in status[0].why and str(status[1]) == "chip 1: usable", status
    assert not alive(chip0)
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2, chip=1))  # the chain goes on on chip 1
    assert_chain_ran(x, y, before + 2)


def gated_worker(closing, spin=None, task_timeout=30):
    """A traced chain_worker with test.gate registered, initialized: (w, add, gate kernel, x, y)."""
    w, add = chain_worker(closing, spin, trace=True, task_timeout=task_timeout)
    gate_k = w.register(kernel_callable("test.gate"))
    w.init()
    x, y = pair(w)
    return w, add, gate_k, x, y


def gated_chain(w, tmp_path, gate_k, add, x, y, n, then=None, **gate_kw):
    """An orch fn that submits test.gate on chip 0 writing x (Gate's keywords), then a chain of n
    tasks behind it (the first on chip 0 behind the gate), then calls then(gate); and the dict
    that receives the gate's handle as "gate"."""
    handles = {}

    def orch(o, _a, _c):
        g = Gate(w, tmp_path, hold=x, **gate_kw)
        handles["gate"] = g.submit(o, gate_k)
        submit_chain(o, add, x, y, n)
        if then is not None:
            then(g)

    return orch, handles


def assert_untouched(x, y):
    np.testing.assert_array_equal(view_array(x), np.arange(N, dtype=np.float32))
    np.testing.assert_array_equal(view_array(y), np.full(N, -1, dtype=np.float32))


def chained_behind_gate(w, gate):
    """The RUN events of the gate task and of the first task after it (both on chip 0)."""
    runs = [i for i in intervals(w.trace_events()) if i.lane == "chip 0"]
    by_task = {i.task.id: i for i in runs}
    return by_task[gate.id], by_task[gate.id + 1]


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_chained_task_goes_to_its_chip_behind_its_producer_and_reads_what_it_wrote(closing, tmp_path, spin):
    w, add, gate_k, x, y = gated_worker(closing, spin)
    n = 200
    # the gate writes x (leaves its bytes): the chain's first task reads it
    orch, handles = gated_chain(w, tmp_path, gate_k, add, x, y, n, then=Gate.open)
    w.run(orch)
    assert_chain_ran(x, y, n)
    gate, first = chained_behind_gate(w, handles["gate"])
    assert gate.ok and first.ok, (gate, first)
    # published before the gate's result was collected: it waited on the chip, not in the parent
    assert first.start_ns < gate.end_ns, (gate, first)
    assert all(not s.lost and not s.below_lost for s in w.child_status())


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_failing_producer_skips_its_chained_task_which_is_poisoned_as_today(closing, tmp_path, spin):
    w, add, gate_k, x, y = gated_worker(closing, spin)
    after = 20
    orch, handles = gated_chain(w, tmp_path, gate_k, add, x, y, after, timeout_ms=500)  # never opened: fails
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 0 failed" in msg and "never appeared" in msg, msg
    assert f"{after} dependent task(s) were not run" in msg, msg
    assert_untouched(x, y)  # nothing after the failure ran
    gate, first = chained_behind_gate(w, handles["gate"])
    assert not gate.ok and first.start_ns < gate.end_ns, (gate, first)
    assert not first.ok and "SKIPPED" in first.error, first  # the chip skipped it: it was on the chip
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2))  # the chip still serves the chain
    assert_chain_ran(x, y, 2)


def test_a_chip_killed_with_two_tasks_in_flight_fails_both_and_poisons_the_rest(closing, tmp_path):
    w, add, gate_k, x, y = gated_worker(closing)
    chip0 = w.child_pids()[0]
    after = 30
    # the gate is never opened: chip 0 dies in it, with the chain's first task behind it
    orch, handles = gated_chain(w, tmp_path, gate_k, add, x, y, after, then=lambda _g: os.kill(chip0, signal.SIGKILL))
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 0" in msg and "CHILD_DIED" in msg and "signal 9" in msg, msg
    assert f"{after} dependent task(s) were not run" in msg, msg
    gate, first = chained_behind_gate(w, handles["gate"])
    assert first.start_ns < gate.end_ns, (gate, first)  # both were in flight on chip 0
    assert not gate.ok and "CHILD_DIED" in gate.error, gate
    assert not first.ok and "CHILD_DIED" in first.error, first
    assert_untouched(x, y)
    status = w.child_status()
    assert status[0].lost and "signal 9" in status[0].why and str(status[1]) == "chip 1: usable", status
    assert not alive(chip0)
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2, chip=1))  # the chain goes on on chip 1
    assert_chain_ran(x, y, 2)


@pytest.mark.parametrize("spin", [None, 0.0])
def test_a_producer_past_its_deadline_fails_its_chained_task_and_poisons_the_rest(closing, tmp_path, spin):
    """The Worker's task_timeout on a chain's head: the chip is killed (a kernel cannot be stopped
    otherwise), the task chained behind the head on that chip fails with it, the rest of the chain
    is poisoned, nothing after the head ran, and the chain goes on on the other chip."""
    w, add, gate_k, x, y = gated_worker(closing, spin, task_timeout=1)
    chip0 = w.child_pids()[0]
    after = 20
    # the gate is never opened and waits far past task_timeout
    orch, handles = gated_chain(w, tmp_path, gate_k, add, x, y, after, timeout_ms=60_000)
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'test.gate', member 0) on chip 0" in msg and "TIMED_OUT" in msg, msg
    assert f"{after} dependent task(s) were not run" in msg, msg
    gate, first = chained_behind_gate(w, handles["gate"])
    assert first.start_ns < gate.end_ns, (gate, first)  # the chained task was on chip 0 behind the gate
    assert not gate.ok and "TIMED_OUT" in gate.error, gate
    assert not first.ok and "the lane was lost before this task ran" in first.error, first
    assert_untouched(x, y)
    status = w.child_status()
    assert status[0].lost and str(status[1]) == "chip 1: usable", status
    deadline = time.monotonic() + 10
    while alive(chip0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(chip0)
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2, chip=1))  # the chain goes on on chip 1
    assert_chain_ran(x, y, 2)


@pytest.mark.parametrize("spin", [None, 0.0])
def test_ctrl_c_withdraws_a_chained_task_its_chip_has_not_begun(closing, tmp_path, spin):
    """Ctrl-C in the orch fn (a KeyboardInterrupt out of it) while the gate runs on chip 0 with the
    chain's first task already on chip 0's lane behind it: that task is withdrawn, not run once the
    gate finishes, and is counted among the cancelled; the gate itself finishes."""
    w, add, gate_k, x, y = gated_worker(closing, spin)
    gates = []

    def interrupt(g):
        gates.append(g)
        raise KeyboardInterrupt

    orch, handles = gated_chain(w, tmp_path, gate_k, add, x, y, 2, then=interrupt)
    interrupted_behind_gate(w, orch, cancelled=2)  # the withdrawn task among them
    gates[0].open()
    w.run(lambda o, _a, _c: None)  # waits for the gate
    gate, first = chained_behind_gate(w, handles["gate"])
    assert gate.ok and first.start_ns < gate.end_ns, (gate, first)  # the first task was on the lane behind the gate
    assert not first.ok and "its parent withdrew it before it started" in first.error, first
    assert_untouched(x, y)  # the gate leaves x as it is; neither chained task ran
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    w.run(lambda o, _a, _c: submit_chain(o, add, x, y, 2))  # the chip still serves the chain
    assert_chain_ran(x, y, 2)
