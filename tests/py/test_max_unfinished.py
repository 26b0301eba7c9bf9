"""Worker(max_unfinished=N): a submit waits while N tasks of the Worker are unfinished, so a run
streaming its tasks holds at most N in flight; the wait drives the lanes with the GIL released (the
program's other threads run, and one of them may be what a task waits for); every task still runs
once, a batch goes in whole once there is room, a submit that waits long says why it may wait for
ever, and a value the field cannot hold is refused."""

import threading
import time

import pytest

from simpler import DataType, MappedArgs, TensorArgType, Worker, view_array
from worker_helpers import args, closing, path_tensor, wait_for_file  # noqa: F401

IN, INOUT = TensorArgType.INPUT, TensorArgType.INOUT
I64 = DataType.INT64


def add_one(a: MappedArgs) -> None:
    a.array(0)[...] += 1


def _gated(w, release):
    """Registers the tasks, inits `w`, and returns (add_one, the gate, its path argument, a zeroed
    INT64 counter)."""
    step, gate = w.register(add_one), w.register(wait_for_file)
    w.init()
    counter = w.create_buffer(8)
    view_array(counter.tensor((1,), I64))[...] = 0
    return step, gate, path_tensor(w, release), counter


def _run_beside(w, orch, opener, release):
    """Runs `orch` on `w` while a thread runs `opener` (which makes `release`); the file is made in
    any case before the thread is joined, so a failing run leaves no task waiting."""
    t = threading.Thread(target=opener)
    t.start()
    try:
        w.run(orch)
    finally:
        release.touch()
        t.join()


def test_a_submit_waits_for_room_with_the_gil_released(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1, max_unfinished=3)
    closing(w)
    release = tmp_path / "go"
    step, gate, name, counter = _gated(w, release)
    assert w.config.max_unfinished == 3
    seen = {}

    def releaser():
        # The gate holds the sub-worker: the orchestration gets two tasks in beside it, then waits.
        while w.progress().submitted < 3:
            time.sleep(0.001)
        time.sleep(0.05)  # time for a submit that did not wait to go in (it must not)
        seen["submitted"] = w.progress().submitted
        release.touch()  # this thread runs only while the waiting submit has let the GIL go

    def orch(o, _a, _c):
        o.submit_sub(gate, args((name, IN)))
        for _ in range(20):
            o.submit_sub(step, args((counter.tensor((1,), I64), INOUT)))
            seen["most"] = max(seen.get("most", 0), w.progress().unfinished)

    _run_beside(w, orch, releaser, release)
    assert seen["submitted"] == 3
    assert seen["most"] <= 3
    assert view_array(counter.tensor((1,), I64))[0] == 20
    assert w.progress().submitted == 21


def test_a_batch_larger_than_the_window_goes_in_whole(closing):
    w = Worker(level=3, num_sub_workers=2, max_unfinished=2)
    closing(w)
    step = w.register(add_one)
    w.init()
    buf = w.create_buffer(8 * 64)
    view_array(buf.tensor((64,), I64))[...] = 0

    def orch(o, _a, _c):
        for _ in range(3):
            handles = o.submit_sub_many(
                step, [args((buf.tensor((1,), I64, byte_offset=8 * k), INOUT)) for k in range(64)]
            )
            assert len(handles) == 64

    w.run(orch)
    assert (view_array(buf.tensor((64,), I64)) == 3).all()


def test_the_default_limit(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    assert w.config.max_unfinished == 65536


def test_zero_is_no_limit(tmp_path, closing):
    # 300 tasks behind a gate the orchestration opens only after submitting them all: with a
    # limit below 300 this would wait for ever; with none, they all go in, then all run.
    w = Worker(level=3, num_sub_workers=1, max_unfinished=0, task_timeout=60)
    closing(w)
    release = tmp_path / "go"
    step, gate, name, counter = _gated(w, release)

    def orch(o, _a, _c):
        o.submit_sub(gate, args((name, IN)))
        for _ in range(300):
            o.submit_sub(step, args((counter.tensor((1,), I64), INOUT)))
        assert w.progress().unfinished == 301
        release.touch()

    w.run(orch)
    assert view_array(counter.tensor((1,), I64))[0] == 300


def test_a_submit_waiting_long_for_room_says_why_it_may_wait_for_ever(tmp_path, closing, capfd):
    # The gate opens only after more tasks than the window are submitted: the submit after it waits.
    # A Python thread opens it 12 s after that wait began, past the 10 s after which the waiting
    # submit says on stderr what may be wrong (a program that never opens it would wait for ever).
    w = Worker(level=3, num_sub_workers=1, max_unfinished=2)
    closing(w)
    release = tmp_path / "go"
    step, gate, name, counter = _gated(w, release)

    def opener():
        while w.progress().submitted < 2:  # the gate and one task: the next submit waits from now
            time.sleep(0.01)
        time.sleep(12)
        release.touch()

    def orch(o, _a, _c):
        o.submit_sub(gate, args((name, IN)))
        for _ in range(3):
            o.submit_sub(step, args((counter.tensor((1,), I64), INOUT)))

    _run_beside(w, orch, opener, release)
    assert view_array(counter.tensor((1,), I64))[0] == 3
    err = capfd.readouterr().err
    assert (
        "simpler: Worker.submit has waited 10 s for room: max_unfinished=2 tasks of this Worker are unfinished. "
        "If a task waits for something the orchestration does after this submit, it never will: raise "
        "Worker(max_unfinished=...), or set it to 0 (no limit)\n"
    ) in err, err


@pytest.mark.parametrize("bad", [-1, 1 << 64])
def test_a_limit_the_field_cannot_hold_is_refused(bad):
    with pytest.raises(ValueError, match="max_unfinished"):
        Worker(level=3, max_unfinished=bad)
