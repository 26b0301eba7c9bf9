"""Every failure a Worker with chips can meet, each asserted end to end: run()
raises naming the task, the worker and the cause; the failed task's successors
are poisoned and do not run; afterwards the Worker either still runs tasks or
says (child_status) which child it lost; close() leaves no child alive and no
/dev/shm object (conftest). Every test is bounded: the Worker's task_timeout,
an elapsed-time assertion, and worker_helpers.time_bound for a true hang.

Failures: a kernel error, an orchestration error, a Python exception in a
sub-worker, a chip child SIGKILLed mid-task, a task past its deadline, a
descriptor refused at decode (a POSIX shm gone, a FORK_SHM region made after
the fork), a DEVICE tensor sent to the wrong chip or to a sub-worker, an
OUTPUT_EXISTING on a copy-on-write buffer, and a parent that dies."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from simpler import (
    AccessMode,
    BackendKind,
    CallConfig,
    ChipCallable,
    DataType,
    TensorArgType,
    Worker,
    create_buffer,
    view_array,
)
from worker_helpers import (  # noqa: F401
    Gate,
    alive,
    args,
    chip_device,
    close_and_check,
    closing,
    fail_cause,
    kernel_callable,
    rendezvous_dir,
    time_bound,
    wait_gone,
)

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT
F32, I32, I64 = DataType.FLOAT32, DataType.INT32, DataType.INT64
N = 64


def make_worker(closing, **kw):
    kw.setdefault("task_timeout", 30)
    w = Worker(level=3, **kw)
    closing(w)
    return w


def vec(buf, n=N):
    return buf.tensor((n,), F32)


def fill(buf, value, n=N):
    view_array(vec(buf, n))[...] = value


def values(buf, n=N):
    return view_array(vec(buf, n)).copy()


def still_usable(w, vadd, chip=0):
    """Runs c = a + b on `chip` and checks the bytes: the Worker still works."""
    a, c = w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(a, 2)
    fill(c, 0)
    w.run(lambda o, _a, _c: o.submit_next_level(vadd, args((vec(a), IN), (vec(a), IN), (vec(c), OUT)), worker=chip))
    assert (values(c) == 4).all()


def add_one(a):
    a.array(1)[...] = a.array(0) + 1


def boom(a):
    raise ZeroDivisionError("sub-worker boom")


# -- errors inside a task ---------------------------------------------------------


def test_a_kernel_error_names_task_chip_and_cause_and_poisons_chip_and_sub_successors(closing, tmp_path):
    w = make_worker(closing, num_chips=2, num_sub_workers=1)
    gate = w.register(kernel_callable("test.gate"))
    fail = w.register(kernel_callable("test.fail"))
    copy = w.register(ChipCallable("std.copy"))
    vadd = w.register(ChipCallable("std.vector_add"))
    post = w.register(add_one)
    w.init()
    x, y, z = (w.create_buffer(N * 4) for _ in range(3))
    for b in (x, y, z):
        fill(b, 7)
    g = Gate(w, tmp_path)

    def orch(o, _a, _c):
        g.submit(o, gate, chip=0)
        o.submit_next_level(fail, args((g.hold, IN), (vec(x), OUT)), worker=0)  # runs once the graph is built
        o.submit_next_level(copy, args((vec(x), IN), (vec(y), OUT)), worker=1)  # RAW on x
        o.submit_sub(post, args((vec(y), IN), (vec(z), OUT)))  # RAW on y
        g.open()

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    assert time.monotonic() - t0 < 20
    msg = str(info.value)
    assert "(callable 'test.fail', member 0) on chip 0" in msg, msg
    assert "kernel 'test_fail'" in msg and fail_cause() in msg, msg
    assert "2 dependent task(s) were not run" in msg, msg
    assert (values(y) == 7).all() and (values(z) == 7).all(), "a poisoned successor ran"
    assert (values(x) == 7).all(), "a failed run wrote its host output back"
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    still_usable(w, vadd, chip=0)
    still_usable(w, vadd, chip=1)


def test_a_successor_submitted_after_its_producer_failed_is_poisoned_too(closing):
    w = make_worker(closing, num_chips=1, num_sub_workers=1)
    fail = w.register(kernel_callable("test.fail"))
    post = w.register(add_one)
    w.init()
    x, z = w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(x, 1)
    fill(z, 0)

    def orch(o, _a, _c):
        o.submit_next_level(fail, args((vec(x), OUT)), worker=0)
        time.sleep(1.0)  # the failure has come back by now
        o.submit_sub(post, args((vec(x), IN), (vec(z), OUT)))  # RAW on x: a successor of the failed task

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    assert (values(z) == 0).all(), "a successor of a failed task ran"
    assert "1 dependent task(s) were not run" in str(info.value), str(info.value)


def test_an_orchestration_error_mismatched_shapes_is_reported_and_the_chip_stays_usable(closing):
    w = make_worker(closing, num_chips=1)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    a, b, c = w.create_buffer(N * 4), w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(c, 9)
    with pytest.raises(RuntimeError) as info:
        w.run(
            lambda o, _a, _c: o.submit_next_level(
                vadd, args((vec(a), IN), (vec(b, N // 2), IN), (vec(c), OUT)), worker=0
            )
        )
    msg = str(info.value)
    assert "(callable 'std.vector_add', member 0) on chip 0" in msg, msg
    assert "std.vector_add: argument 1's shape differs" in msg, msg
    assert (values(c) == 9).all()
    still_usable(w, vadd)


def test_a_failing_group_member_names_its_member_and_chip_and_poisons_the_successor(closing, tmp_path):
    w = make_worker(closing, num_chips=2)
    gate = w.register(kernel_callable("test.gate"))
    vadd = w.register(ChipCallable("std.vector_add"))
    copy = w.register(ChipCallable("std.copy"))
    w.init()
    a, c, d = w.create_buffer(N * 4), w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(a, 1)
    fill(c, 0)
    fill(d, 0)
    half = N // 2
    g = Gate(w, tmp_path, hold=vec(a))  # the group reads a: it runs once the graph is built

    def part(buf, i, n=half):
        return buf.tensor((n,), F32, byte_offset=i * half * 4)

    def orch(o, _a, _c):
        g.submit(o, gate, chip=1)
        good = args((part(a, 0), IN), (part(a, 0), IN), (part(c, 0), OUT))
        bad = args((part(a, 1), IN), (part(a, 1, half // 2), IN), (part(c, 1), OUT))  # shapes differ
        o.submit_next_level_group(vadd, [good, bad], workers=[0, 1])
        o.submit_next_level(copy, args((vec(c), IN), (vec(d), OUT)), worker=0)
        g.open()

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'std.vector_add', member 1) on chip 1" in msg and "argument 1's shape differs" in msg, msg
    assert "1 dependent task(s) were not run" in msg, msg
    assert (values(d) == 0).all(), "a poisoned successor ran"
    still_usable(w, vadd, chip=1)


def test_run_returns_only_after_every_member_of_a_failed_group_has_finished(closing):
    w = make_worker(closing, num_chips=2)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    slot = w.create_buffer(16)
    wrong = w.create_buffer(16)
    view_array(slot.tensor((2,), I64))[...] = 0

    def orch(o, _a, _c):
        o.submit_next_level_group(
            stamp,
            [
                args((slot.tensor((2,), I64), OUT), scalars=(500,)),
                args((wrong.tensor((4,), DataType.INT32), OUT), scalars=(0,)),
            ],
            workers=[0, 1],
        )

    with pytest.raises(RuntimeError, match=r"member 1\) on chip 1 failed.*INT64"):
        w.run(orch)
    start, end = view_array(slot.tensor((2,), I64))
    assert start != 0 and end != 0, "run() returned while member 0 was still running"


def test_a_python_exception_in_a_sub_worker_poisons_its_chip_successor(closing, tmp_path):
    w = make_worker(closing, num_chips=1, num_sub_workers=1)
    gate = w.register(kernel_callable("test.gate"))
    bad = w.register(boom)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    x, y = w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(y, 3)
    g = Gate(w, tmp_path)

    def orch(o, _a, _c):
        g.submit(o, gate)
        o.submit_sub(bad, args((g.hold, IN), (vec(x), OUT)))  # runs once the graph is built
        o.submit_next_level(vadd, args((vec(x), IN), (vec(x), IN), (vec(y), OUT)), worker=0)
        g.open()

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "sub task" in msg and "(callable 'boom', member 0) on sub-worker 0" in msg, msg
    assert "ZeroDivisionError: sub-worker boom" in msg and "in boom" in msg, msg
    assert "1 dependent task(s) were not run" in msg, msg
    assert (values(y) == 3).all(), "a poisoned successor ran"
    still_usable(w, vadd)


# -- a child that dies or hangs -------------------------------------------------------


def test_a_chip_child_killed_mid_task_fails_the_run_and_is_reported_lost(closing, tmp_path):
    w = make_worker(closing, num_chips=2, num_sub_workers=1)
    rdv = w.register(kernel_callable("test.rendezvous"))
    copy = w.register(ChipCallable("std.copy"))
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    chip0 = w.child_pids()[0]
    where = rendezvous_dir(w, tmp_path)
    slot, out = w.create_buffer(8), w.create_buffer(8)
    view_array(out.tensor((2,), I32))[...] = -1
    view_array(slot.tensor((2,), I32))[...] = 0

    def kill_once_started():
        """SIGKILLs chip 0 once its task marked itself running (<tmp_path>/0), waiting for a partner in vain."""
        deadline = time.monotonic() + 10
        while not (tmp_path / "0").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(chip0, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_started)

    def orch(o, _a, _c):
        o.submit_next_level(rdv, args((where, IN), (slot.tensor((2,), I32), OUT), scalars=(0, 10_000)), worker=0)
        o.submit_next_level(copy, args((slot.tensor((2,), I32), IN), (out.tensor((2,), I32), OUT)), worker=1)
        killer.start()

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    killer.join(10)
    assert time.monotonic() - t0 < 8, "the run waited for the killed task"
    assert (view_array(slot.tensor((2,), I32)) == 0).all(), "the task finished before it was killed"
    msg = str(info.value)
    assert "(callable 'test.rendezvous', member 0) on chip 0" in msg and "CHILD_DIED" in msg and "signal 9" in msg, msg
    assert "1 dependent task(s) were not run" in msg, msg
    assert (view_array(out.tensor((2,), I32)) == -1).all(), "a poisoned successor ran"
    status = w.child_status()
    assert status[0].lost and "signal 9" in status[0].why and str(status[1]) == "chip 1: usable", status
    assert not alive(chip0)
    still_usable(w, vadd, chip=1)
    # a task for the lost chip is an error of its run, not a hang
    t0 = time.monotonic()
    with pytest.raises((RuntimeError, ValueError), match="chip 0"):
        still_usable(w, vadd, chip=0)
    assert time.monotonic() - t0 < 5


def test_a_chip_child_killed_while_idle_is_reported_lost_and_refused_at_submit(closing):
    w = make_worker(closing, num_chips=2)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    chip0 = w.child_pids()[0]
    os.kill(chip0, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while not w.child_status()[0].lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.child_status()[0].lost, w.child_status()
    with pytest.raises(ValueError, match=r"worker=0 is lost \(chip 0"):
        still_usable(w, vadd, chip=0)
    still_usable(w, vadd, chip=1)


def test_a_chip_child_killed_while_idle_says_how_it_died(closing):
    w = make_worker(closing, num_chips=1)
    w.init()
    os.kill(w.child_pids()[0], signal.SIGKILL)
    deadline = time.monotonic() + 5
    while not w.child_status()[0].lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "signal 9" in w.child_status()[0].why, w.child_status()


def test_a_chip_task_past_its_deadline_is_killed_and_reported(closing):
    w = make_worker(closing, num_chips=1, task_timeout=0.5)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    slot = w.create_buffer(16)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        w.run(lambda o, _a, _c: o.submit_next_level(stamp, args((slot.tensor((2,), I64), OUT), scalars=(20_000,))))
    assert time.monotonic() - t0 < 10
    msg = str(info.value)
    assert "(callable 'test.stamp', member 0) on chip 0" in msg and "TIMED_OUT" in msg, msg
    assert w.child_status()[0].lost, w.child_status()
    assert wait_gone(w.child_pids(), 5) == []


# -- descriptors refused at decode -------------------------------------------------


def test_a_posix_shm_gone_before_the_chip_maps_it_is_refused_at_decode(closing, tmp_path):
    w = make_worker(closing, num_chips=1)
    gate = w.register(kernel_callable("test.gate"))
    copy = w.register(ChipCallable("std.copy"))
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    gone, dst, after = w.create_buffer(N * 4), w.create_buffer(N * 4), w.create_buffer(N * 4)
    fill(dst, 5)
    fill(after, 5)
    os.unlink("/dev/shm/" + gone.shm.name)  # the shm object disappears; the descriptor still names it
    g = Gate(w, tmp_path, hold=vec(dst))  # the refused copy writes dst after the gate: it runs once all is built

    def orch(o, _a, _c):
        g.submit(o, gate)
        o.submit_next_level(copy, args((vec(gone), IN), (vec(dst), OUT)), worker=0)
        o.submit_next_level(copy, args((vec(dst), IN), (vec(after), OUT)), worker=0)
        g.open()

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "(callable 'std.copy', member 0) on chip 0" in msg, msg
    assert "argument refused on chip 0" in msg and gone.shm.name in msg, msg
    assert "1 dependent task(s) were not run" in msg, msg
    assert (values(dst) == 5).all() and (values(after) == 5).all()
    assert [str(s) for s in w.child_status()] == ["chip 0: usable"]
    still_usable(w, vadd)


def test_a_fork_shm_region_made_after_init_is_refused_by_the_chip(closing):
    w = make_worker(closing, num_chips=1)
    copy = w.register(ChipCallable("std.copy"))
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    late = create_buffer(N * 4, backend=BackendKind.FORK_SHM)  # after the fork: the chip has no such region
    dst = w.create_buffer(N * 4)
    try:
        fill(late, 1)
        fill(dst, 5)
        with pytest.raises(RuntimeError) as info:
            w.run(lambda o, _a, _c: o.submit_next_level(copy, args((vec(late), IN), (vec(dst), OUT)), worker=0))
        msg = str(info.value)
        assert "argument refused on chip 0" in msg and "is not a pre-fork region" in msg, msg
        assert (values(dst) == 5).all()
        still_usable(w, vadd)
    finally:
        late.close()


# -- refused at submit ---------------------------------------------------------------


def test_a_device_tensor_sent_to_another_chip_or_to_a_sub_worker_is_refused_at_submit(closing):
    w = make_worker(closing, num_chips=2, num_sub_workers=1)
    copy = w.register(ChipCallable("std.copy"))
    post = w.register(add_one)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    h = w.alloc_shared_tensor((N,), F32)
    h.array()[...] = 1
    ran = {}

    def wrong_chip(o, _a, _c):
        d = o.alloc_child_tensor(1, (N,), F32)
        ran["copy_to"] = o.copy_to(d.tensor(), h.tensor())  # fine: chip 1
        o.submit_next_level(copy, args((d.tensor(), IN), (h.tensor(), OUT)), worker=0)

    with pytest.raises(ValueError) as info:
        w.run(wrong_chip)
    msg = str(info.value)
    assert "argument 0" in msg and "DEVICE memory of chip 1 may only be dispatched to that chip" in msg, msg
    assert "worker=0" in msg and "copy_to" in ran, msg

    def to_sub(o, _a, _c):
        d = o.alloc_child_tensor(0, (N,), F32)
        o.submit_sub(post, args((d.tensor(), IN), (h.tensor(), OUT)))

    with pytest.raises(ValueError) as info:
        w.run(to_sub)
    msg = str(info.value)
    assert "submit of task" in msg and "argument 0" in msg and "sub-worker takes HOST tensors only" in msg, msg
    assert w._state.core.device_stats(0)["live_allocations"] == 0
    assert w._state.core.device_stats(1)["live_allocations"] == 0
    assert all(not s.lost and not s.below_lost for s in w.child_status())
    still_usable(w, vadd, chip=1)


def test_an_output_on_a_copy_on_write_buffer_is_refused_when_named(closing):
    cow = create_buffer(N * 4, AccessMode.READ, BackendKind.FORK_COW)  # before init: the chips inherit it
    with memoryview(cow._owner) as owner_bytes:  # the owner fills it before the fork
        owner_bytes[:] = np.arange(N, dtype=np.float32).tobytes()
    try:
        w = make_worker(closing, num_chips=1)
        copy = w.register(ChipCallable("std.copy"))
        w.init()
        dst = w.create_buffer(N * 4)
        fill(dst, 0)
        submitted = []

        def orch(o, _a, _c):
            submitted.append(o.submit_next_level(copy, args((vec(cow), IN), (vec(dst), OUT)), worker=0))
            o.submit_next_level(copy, args((vec(dst), IN), (vec(cow), OUT)), worker=0)  # refused here

        with pytest.raises(ValueError) as info:
            w.run(orch)
        msg = str(info.value)
        assert "argument 1" in msg and "OUTPUT_EXISTING" in msg and "grants READ" in msg, msg
        assert len(submitted) == 1  # the refused submit recorded nothing; the task before it ran:
        np.testing.assert_array_equal(values(dst), np.arange(N, dtype=np.float32))
        fill(dst, 0)
        ta = args((vec(dst), IN), (vec(cow), IN))
        with pytest.raises(ValueError, match="OUTPUT_EXISTING"):
            ta.set_tag(1, OUT)  # a tag stays mutable after add_tensor, and is checked again
        # READ is what it grants: as an INPUT, zero-copy, the chip reads it at the inherited address
        w.run(
            lambda o, _a, _c: o.submit_next_level(
                copy, args((vec(cow), IN), (vec(dst), OUT)), CallConfig(zero_copy=True), worker=0
            )
        )
        np.testing.assert_array_equal(values(dst), np.arange(N, dtype=np.float32))
    finally:
        cow.close()


def test_device_memory_exhausted_is_refused_at_alloc_and_nothing_leaks(closing):
    w = make_worker(closing, num_chips=1, device_memory_bytes=1 << 20)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    got = []

    def orch(o, _a, _c):
        got.append(o.alloc_child_tensor(0, (128 * 1024,), F32))  # 512 KiB: fits
        o.alloc_child_tensor(0, (256 * 1024,), F32)  # 1 MiB more: does not

    with pytest.raises(RuntimeError, match="alloc_child_tensor: chip 0 has no free block"):
        w.run(orch)
    assert got[0].released
    assert w._state.core.device_stats(0)["live_allocations"] == 0
    still_usable(w, vadd)


# -- the parent dies ---------------------------------------------------------------------

PARENT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from simpler import ChipCallable, Worker
    w = Worker(level=3, num_chips=2, num_sub_workers=1)
    w.register(ChipCallable("std.noop"))
    w.register(print)
    w.init()
    print(" ".join(str(p) for p in w.child_pids()), flush=True)
    time.sleep(60)
""")


def test_a_parent_that_dies_takes_its_children_with_it():
    proc = subprocess.Popen(
        [sys.executable, "-c", PARENT.format(tests=os.path.dirname(__file__))], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 3 and all(alive(p) for p in pids), line
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()
    left = wait_gone(pids, 10)
    assert left == [], f"children {left} outlived their killed parent"
