"""Worker.submit: runs that do not block. Several runs are in flight at once
(proved by rendezvous: a task of an earlier run waits for a file that a task of
a later run writes), a later run's tasks are ordered after an earlier run's
through the buffers they share, each RunFuture completes with its own run's
outcome (a task poisoned by another run's failure names it), asyncio can await
a run, close() ends every run in flight with an error, and cancel() stops only
a run not yet started."""

import asyncio
import concurrent.futures
import os
import threading
import time

import pytest

from simpler import ChipCallable, DataType, Orchestrator, RunFuture, TensorArgType, Worker, view_array
from worker_helpers import args, close_and_check, wait_gone

_BOUND_S = 30.0


def _path_of(a, i: int = 0) -> str:
    return bytes(a.array(i)).split(b"\0")[0].decode()


def _wait_for(path: str) -> None:
    deadline = time.monotonic() + _BOUND_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.002)


def _held_write(a):
    """Waits for the file named by argument 0, then writes 7 into argument 1."""
    _wait_for(_path_of(a))
    a.array(1)[...] = 7


def _held_raise(a):
    """Waits for the file named by argument 0, then fails."""
    _wait_for(_path_of(a))
    raise ValueError("boom in run 0")


def _touch(a):
    """Creates the file named by argument 0."""
    open(_path_of(a), "w").close()


def _plus_one(a):
    a.array(1)[...] = a.array(0) + 1


def _fill_index(a):
    """Argument 0 (int32) := scalar 0."""
    a.array(0)[...] = a.scalars[0]


def _hang(a):
    open(_path_of(a), "w").close()
    time.sleep(3600)


class _Setup:
    def __init__(self, tmp_path, num_chips: int = 0, num_sub_workers: int = 2):
        self.tmp = tmp_path
        self.w = Worker(level=3, num_chips=num_chips or None, num_sub_workers=num_sub_workers)
        self.w.config.close_grace = 0.05
        self.held_write = self.w.register(_held_write)
        self.held_raise = self.w.register(_held_raise)
        self.touch = self.w.register(_touch)
        self.plus_one = self.w.register(_plus_one)
        self.fill_index = self.w.register(_fill_index)
        self.hang = self.w.register(_hang)
        self.vadd = self.w.register(ChipCallable("std.vector_add")) if num_chips else None
        self.w.init()
        self.pids = self.w.child_pids()

    def path(self, name: str):
        data = str(self.tmp / name).encode() + b"\0"
        b = self.w.create_buffer(len(data))
        b.shm.buf[: len(data)] = data
        return b.tensor((len(data),), DataType.UINT8)

    def ints(self, n: int = 4, dtype=DataType.INT32):
        t = self.w.create_buffer(n * 4).tensor((n,), dtype)
        view_array(t)[...] = 0
        return t

    def close(self):
        close_and_check(self.w)
        assert not wait_gone(self.pids)


@pytest.fixture
def setup(tmp_path):
    made = []

    def make(**kw):
        s = _Setup(tmp_path, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_two_runs_in_flight_the_second_reads_what_the_first_writes(setup):
    s = setup()
    gate, x, y = s.path("gate"), s.ints(), s.ints()

    def first(o, _a, _c):  # its task ends only once the second run's task has run
        o.submit_sub(s.held_write, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING)))

    def second(o, _a, _c):
        o.submit_sub(s.plus_one, args((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)))
        o.submit_sub(s.touch, args((gate, TensorArgType.INPUT)))

    f1 = s.w.submit(first)
    f2 = s.w.submit(second)
    assert isinstance(f1, RunFuture) and isinstance(f1, concurrent.futures.Future)
    assert isinstance(f2.result(_BOUND_S), Orchestrator)
    assert isinstance(f1.result(_BOUND_S), Orchestrator)
    assert list(view_array(x)) == [7] * 4
    assert list(view_array(y)) == [8] * 4


def test_a_chip_task_of_the_second_run_reads_what_a_sub_task_of_the_first_writes(setup):
    s = setup(num_chips=1)
    gate = s.path("gate")
    x = s.w.create_buffer(16).tensor((4,), DataType.FLOAT32)
    y = s.w.create_buffer(16).tensor((4,), DataType.FLOAT32)
    view_array(x)[...] = 0
    view_array(y)[...] = 0

    def first(o, _a, _c):
        o.submit_sub(s.held_write, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING)))

    def second(o, _a, _c):
        o.submit_next_level(
            s.vadd,
            args((x, TensorArgType.INPUT), (x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)),
            worker=0,
        )
        o.submit_sub(s.touch, args((gate, TensorArgType.INPUT)))

    futures = [s.w.submit(first), s.w.submit(second)]
    for f in futures:
        f.result(_BOUND_S)
    assert list(view_array(x)) == [7.0] * 4
    assert list(view_array(y)) == [14.0] * 4


def test_asyncio_awaits_a_run(setup):
    s = setup()
    x = s.ints()
    ta = args((x, TensorArgType.OUTPUT_EXISTING), scalars=(5,))

    async def main():
        orch = await asyncio.wrap_future(s.w.submit(lambda o, _a, _c: o.submit_sub(s.fill_index, ta)))
        return orch, list(view_array(x))

    orch, seen = asyncio.run(main())
    assert isinstance(orch, Orchestrator) and len(orch.submitted) == 1
    assert seen == [5] * 4


def test_each_future_carries_its_own_runs_failure(setup):
    s = setup()
    gate, x, y, z = s.path("gate"), s.ints(), s.ints(), s.ints()

    def failing(o, _a, _c):  # run 0: fails once run 1 has submitted its task that needs x
        o.submit_sub(s.held_raise, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING)))

    def needs_x(o, _a, _c):  # run 1: its task is poisoned by run 0's failure
        o.submit_sub(s.plus_one, args((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)))
        open(str(s.tmp / "gate"), "w").close()

    def independent(o, _a, _c):  # run 2: unaffected
        o.submit_sub(s.fill_index, args((z, TensorArgType.OUTPUT_EXISTING), scalars=(3,)))

    f0, f1, f2 = s.w.submit(failing), s.w.submit(needs_x), s.w.submit(independent)
    f2.result(_BOUND_S)
    assert list(view_array(z)) == [3] * 4
    e0, e1 = f0.exception(_BOUND_S), f1.exception(_BOUND_S)
    assert isinstance(e0, RuntimeError) and isinstance(e1, RuntimeError)
    assert "sub task 1 of run 0 (callable '_held_raise', member 0)" in str(e0)
    assert "boom in run 0" in str(e0)
    assert (
        "sub task 2 of run 1 (callable '_plus_one', member 0) was not run: it needs what sub task 1 of run 0 "
        "(callable '_held_raise', member 0) on sub-worker" in str(e1)
    )
    assert "boom in run 0" in str(e1) and "(in another run)" in str(e1)
    assert list(view_array(y)) == [0] * 4
    s.w.run(lambda o, _a, _c: None)  # the Worker goes on


def test_an_orchestration_function_that_raises_fails_its_future_after_its_tasks(setup):
    s = setup()
    x = s.ints()

    def orch(o, _a, _c):
        o.submit_sub(s.fill_index, args((x, TensorArgType.OUTPUT_EXISTING), scalars=(9,)))
        raise KeyError("orch broke")

    f = s.w.submit(orch)
    with pytest.raises(KeyError, match="orch broke"):
        f.result(_BOUND_S)
    assert list(view_array(x)) == [9] * 4  # the task it submitted finished first
    assert s.w.submit(lambda o, _a, _c: None).result(_BOUND_S) is not None


def test_wait_is_false_while_the_run_goes_on_then_true(setup):
    s = setup()
    gate, x = s.path("gate"), s.ints()
    f = s.w.submit(
        lambda o, _a, _c: o.submit_sub(
            s.held_write, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING))
        )
    )
    assert f.wait(0.05) is False
    assert not f.done() and f.running()
    open(str(s.tmp / "gate"), "w").close()
    assert f.wait(_BOUND_S) is True
    assert f.done() and f.exception() is None
    with pytest.raises(ValueError, match=r"RunFuture.wait.timeout: seconds >= 0, or None \(got -1\)"):
        f.wait(-1)
    with pytest.raises(TypeError, match=r"RunFuture.wait.timeout: expected seconds or None \(got str '1'\)"):
        f.wait("1")


def test_fifty_runs_in_flight_at_once(setup):
    s = setup()
    n = 50
    gate = s.path("gate")
    buf = s.w.create_buffer(n * 4)
    slot = [buf.tensor((1,), DataType.INT32, byte_offset=4 * i) for i in range(n)]
    first = s.w.submit(
        lambda o, _a, _c: o.submit_sub(
            s.held_write, args((gate, TensorArgType.INPUT), (slot[0], TensorArgType.OUTPUT_EXISTING))
        )
    )
    futures = [first]
    for i in range(1, n):
        futures.append(
            s.w.submit(
                lambda o, _a, _c, i=i: o.submit_sub(
                    s.fill_index, args((slot[i], TensorArgType.OUTPUT_EXISTING), scalars=(i,))
                )
            )
        )
    # the last run opens the first one's gate: every run is in flight until then
    futures.append(s.w.submit(lambda o, _a, _c: o.submit_sub(s.touch, args((gate, TensorArgType.INPUT)))))
    done, not_done = concurrent.futures.wait(futures, _BOUND_S)
    assert not not_done
    assert all(f.exception() is None for f in done)
    assert list(buf.array((n,), DataType.INT32)) == [7, *range(1, n)]


def test_run_after_submits_is_built_after_them(setup):
    s = setup()
    x, y = s.ints(), s.ints()
    s.w.submit(lambda o, _a, _c: o.submit_sub(s.fill_index, args((x, TensorArgType.OUTPUT_EXISTING), scalars=(4,))))
    s.w.run(
        lambda o, _a, _c: o.submit_sub(s.plus_one, args((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)))
    )
    assert list(view_array(y)) == [5] * 4


def test_run_from_two_threads_puts_both_runs_in_flight(setup):
    s = setup()
    gate, x = s.path("gate"), s.ints()
    failures = []
    submitted = threading.Event()

    def held(o, _a, _c):
        o.submit_sub(s.held_write, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING)))
        submitted.set()

    def first():
        try:
            s.w.run(held)
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    t = threading.Thread(target=first)
    t.start()
    assert submitted.wait(_BOUND_S)
    # this run opens the first one's gate: the first run() returns only if both were in flight together
    s.w.run(lambda o, _a, _c: o.submit_sub(s.touch, args((gate, TensorArgType.INPUT))))
    t.join(_BOUND_S)
    assert not t.is_alive() and failures == []
    assert list(view_array(x)) == [7] * 4


def test_cancel_stops_only_a_run_not_yet_started(setup):
    s = setup()
    x = s.ints()
    release = threading.Event()
    ran = []

    entered = threading.Event()

    def blocking(o, _a, _c):
        entered.set()
        assert release.wait(_BOUND_S)

    f1 = s.w.submit(blocking)
    f2 = s.w.submit(
        lambda o, _a, _c: ran.append(o.submit_sub(s.fill_index, args((x, TensorArgType.OUTPUT_EXISTING), scalars=(1,))))
    )
    assert entered.wait(_BOUND_S)
    assert not f1.cancel() and f1.running()  # started: runs to its end
    assert f2.cancel() and f2.cancelled()
    release.set()
    f1.result(_BOUND_S)
    s.w.run(lambda o, _a, _c: None)
    assert ran == [] and list(view_array(x)) == [0] * 4


def test_close_ends_every_run_in_flight_with_an_error(setup):
    s = setup()
    started = s.path("started")
    gate = threading.Event()
    hung = s.w.submit(lambda o, _a, _c: o.submit_sub(s.hang, args((started, TensorArgType.INPUT))))

    entered = threading.Event()

    def blocked(o, _a, _c):  # still building when close() comes; its submit then is refused
        entered.set()
        assert gate.wait(_BOUND_S)
        o.submit_sub(s.touch, args((started, TensorArgType.INPUT)))

    building = s.w.submit(blocked)
    queued = s.w.submit(lambda o, _a, _c: None)
    _wait_file(str(s.tmp / "started"))
    assert entered.wait(_BOUND_S)
    s.w.close()
    with pytest.raises(
        RuntimeError,
        match=r"the Worker was closed while the run waited; these had not finished "
        r"and never will: sub task 1 of run 0 \(callable '_hang', member 0\)",
    ):
        hung.result(_BOUND_S)
    with pytest.raises(RuntimeError, match="the Worker was closed before the run started"):
        queued.result(_BOUND_S)
    gate.set()
    with pytest.raises(RuntimeError, match="closed"):
        building.result(_BOUND_S)
    builder = s.w._runs._builder
    builder.join(_BOUND_S)
    assert not builder.is_alive()
    with pytest.raises(RuntimeError, match="closed; create a new Worker"):
        s.w.submit(lambda o, _a, _c: None)


def _wait_file(path: str) -> None:
    deadline = time.monotonic() + _BOUND_S
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)


def test_submit_refuses_misuse(setup):
    s = setup()
    with pytest.raises(TypeError, match=r"Worker.submit.orch_fn: expected a callable"):
        s.w.submit(3)
    f = s.w.submit(lambda o, _a, _c: s.w.submit(lambda o2, _a2, _c2: None))
    with pytest.raises(RuntimeError, match=r"Worker.submit: a run is already in progress on this Worker"):
        f.result(_BOUND_S)
    later: list = []
    ready = threading.Event()

    def waits_for_a_later_run(o, _a, _c):
        assert ready.wait(_BOUND_S)
        later[0].result()

    f1 = s.w.submit(waits_for_a_later_run)
    later.append(s.w.submit(lambda o, _a, _c: None))
    ready.set()
    with pytest.raises(
        RuntimeError,
        match=r"RunFuture.result: called from an orchestration function for a run "
        r"not built yet \(this run or a later one\)",
    ):
        f1.result(_BOUND_S)
    later[0].result(_BOUND_S)
    unstarted = Worker(num_sub_workers=1)
    with pytest.raises(RuntimeError, match="call init\\(\\) first"):
        unstarted.submit(lambda o, _a, _c: None)
    unstarted.close()


def _l3_add_one(o, a, _c):
    """Runs in an L3 child: one chip task, y := x + x."""
    o.submit_next_level(_L3_VADD[0], a, worker=0)


_L3_VADD: list = []


def test_a_level_4_worker_submits_and_its_child_refuses(tmp_path):
    w4 = Worker(level=4)
    child = Worker(level=3, num_chips=1)
    w4.add_worker(child)
    try:
        _L3_VADD[:] = [w4.register(ChipCallable("std.vector_add"))]
        fwd = w4.register(_l3_add_one)
        w4.init()
        x = w4.create_buffer(16).tensor((4,), DataType.FLOAT32)
        y = w4.create_buffer(16).tensor((4,), DataType.FLOAT32)
        view_array(x)[...] = 3
        view_array(y)[...] = 0
        f = w4.submit(
            lambda o, _a, _c: o.submit_next_level(
                fwd,
                args((x, TensorArgType.INPUT), (x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)),
                worker=0,
            )
        )
        f.result(_BOUND_S)
        assert list(view_array(y)) == [6.0] * 4
        with pytest.raises(
            RuntimeError,
            match=r"Worker.submit: this Worker is L3, a child of another "
            r"Worker; its runs are its parent's tasks",
        ):
            child.submit(lambda o, _a, _c: None)
    finally:
        pids = w4.child_pids()
        w4.close()
        assert not wait_gone(pids)


def test_a_done_callback_may_not_wait_for_a_run_still_in_flight(setup):
    s = setup()
    gate, x = s.path("gate"), s.ints()
    held = s.w.submit(
        lambda o, _a, _c: o.submit_sub(
            s.held_write, args((gate, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING))
        )
    )
    go = threading.Event()
    quick = s.w.submit(lambda o, _a, _c: go.wait(_BOUND_S))
    seen = []

    def callback(_f):
        try:
            held.result()
        except RuntimeError as e:
            seen.append(str(e))

    quick.add_done_callback(callback)  # before quick can finish: it runs on the completion thread
    go.set()
    quick.result(_BOUND_S)
    assert held.running()
    open(str(s.tmp / "gate"), "w").close()
    held.result(_BOUND_S)
    assert len(seen) == 1 and seen[0].startswith(
        "RunFuture.result: called from a done-callback for a run that has not finished"
    ), seen
