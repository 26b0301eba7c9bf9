"""Failures in a tree of Workers (L4 -> L3 -> L2): a kernel that fails, an
orchestration that raises, a Worker or chip killed, each reported at the top
with the path to where it happened, and the tree goes on."""

import json
import logging
import os
import signal
import threading
import time

import pytest

from isolation import shm_names  # this run's objects (conftest puts tests/chaos on the path)
from simpler import ChipCallable, DataType, TensorArgType, Worker
from worker_helpers import (  # noqa: F401
    alive,
    args,
    closing,
    descendants,
    fail_cause,
    kernel_callable,
    nested_tree,
    wait_gone,
)

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 1024


def test_a_kernel_failure_at_l2_is_raised_at_l4_with_the_whole_path_and_the_tree_goes_on(closing):
    w4 = nested_tree(closing)
    fail = w4.register(kernel_callable("test.fail"))
    vadd = w4.register(ChipCallable("std.vector_add"))

    def on_chip_1(o, a, cfg):
        o.submit_next_level(fail, a, worker=1)

    def add(o, a, cfg):
        o.submit_next_level(vadd, a, worker=0)

    failing, adding = w4.register(on_chip_1), w4.register(add)
    w4.init()
    a, c = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
    a.array((N,), F32)[...] = 1
    ta = args((a.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT))
    with pytest.raises(RuntimeError) as e:
        w4.run(lambda o, _a, _c: o.submit_next_level(failing, ta, worker=0))
    text = str(e.value)
    assert text.startswith("L4 → L3[0] → chip 1: "), text
    assert (
        "callable 'test_a_kernel_failure_at_l2_is_raised_at_l4_with_the_whole_path_and_the_tree_goes_on."
        "<locals>.on_chip_1'" in text
    )  # the L4 task
    assert "(callable 'test.fail', member 0) on chip 1 failed" in text  # the L3 task
    assert fail_cause() in text  # the cause
    ta = args((a.tensor((N,), F32), IN), (a.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT))
    w4.run(lambda o, _a, _c: o.submit_next_level(adding, ta, worker=0))
    assert (c.array((N,), F32) == 2).all()


def test_an_orchestration_that_raises_in_an_l3_child_is_reported_with_its_traceback(closing):
    w4 = nested_tree(closing, children=1, chips=1)

    def broken(o, a, cfg):
        raise KeyError("no such tile")

    h = w4.register(broken)
    w4.init()
    with pytest.raises(RuntimeError, match=r"(?s)^L4 → L3\[0\]: .*orchestration .*broken.* raised:.*KeyError"):
        w4.run(lambda o, _a, _c: o.submit_next_level(h, args(), worker=0))


def _gated_tree(closing, tmp_path):
    """A tree whose L3 orchestration writes its Worker's child pids to a file
    and then runs test.gate on chip 1 (held until the test says)."""
    w4 = nested_tree(closing)
    gate = w4.register(kernel_callable("test.gate"))
    vadd = w4.register(ChipCallable("std.vector_add"))
    marks = tmp_path / "marks"
    marks.mkdir()

    def held(o, a, cfg):
        (marks / f"{os.getpid()}").write_text(json.dumps(o._worker.child_pids()))
        o.submit_next_level(gate, a, worker=1)

    def add(o, a, cfg):
        o.submit_next_level(vadd, a, worker=0)

    handles = w4.register(held), w4.register(add)
    w4.init()
    path = str(tmp_path / "never").encode() + b"\0"
    pbuf = w4.create_buffer(len(path))
    pbuf.shm.buf[: len(path)] = path
    return w4, handles, marks, pbuf.tensor((len(path),), DataType.UINT8)


def _await_mark(marks, bound_s=30.0):
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        for f in marks.iterdir():
            text = f.read_text()
            if text:
                return int(f.name), json.loads(text)
        time.sleep(0.01)
    raise AssertionError("the L3 orchestration never started")


@pytest.mark.parametrize("victim", ["l3", "chip"])
def test_a_sigkilled_l3_child_or_chip_below_it_is_reported_at_l4_and_the_rest_goes_on(closing, tmp_path, victim):
    w4, (held, add), marks, path = _gated_tree(closing, tmp_path)
    shm_before = shm_names()
    a, c, hold = w4.create_buffer(N * 4), w4.create_buffer(N * 4), w4.create_buffer(64)
    a.array((N,), F32)[...] = 1
    l3_pids = w4.child_pids()
    below = {p: descendants(p) for p in l3_pids}

    def kill():
        l3, chips = _await_mark(marks)
        os.kill(l3 if victim == "l3" else chips[1], signal.SIGKILL)

    killer = threading.Thread(target=kill)
    killer.start()
    with pytest.raises(RuntimeError) as e:
        w4.run(
            lambda o, _a, _c: o.submit_next_level(
                held, args((path, IN), (hold.tensor((16,), F32), OUT), scalars=(60_000,)), worker=0
            )
        )
    killer.join()
    text = str(e.value)
    if victim == "l3":
        assert text.startswith("L4 → L3[0]: ") and "CHILD_DIED" in text and "signal 9" in text, text
        assert wait_gone([l3_pids[0], *below[l3_pids[0]]]) == []  # the whole subtree went
        assert any(s.lost and s.child.name() == "worker 0" for s in w4.child_status())
        with pytest.raises(ValueError, match="worker=0 is lost"):
            w4.run(lambda o, _a, _c: o.submit_next_level(add, args(), worker=0))
    else:
        assert text.startswith("L4 → L3[0] → chip 1: ") and "CHILD_DIED" in text and "signal 9" in text, text
        assert alive(l3_pids[0])
    survivor = 1 if victim == "l3" else 0
    ta = args((a.tensor((N,), F32), IN), (a.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT))
    w4.run(lambda o, _a, _c: o.submit_next_level(add, ta, worker=survivor))
    assert (c.array((N,), F32) == 2).all()
    pids = w4.child_pids() + [p for ps in below.values() for p in ps]
    w4.close()
    assert wait_gone(pids) == []
    assert shm_names() - shm_before == set()


class _Records(logging.Handler):
    """The "simpler" logger's records, from any thread."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _vadd_noting_its_chips(top, marks):
    """An L3 orchestration registered on `top`: it writes its Worker's chip pids
    to `marks`, then runs std.vector_add on chip 0."""
    vadd = top.register(ChipCallable("std.vector_add"))

    def add(o, a, cfg):
        marks.write_text(json.dumps(o._worker.child_pids()))
        o.submit_next_level(vadd, a, worker=0)

    return top.register(add)


def _await(predicate, what, bound_s=30.0):
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"{what} within {bound_s} s")


def test_a_chip_lost_inside_an_l3_child_is_reported_at_l4_at_once_without_a_run(closing, tmp_path):
    # The L4's child_status() said "usable" and nothing was logged until the next
    # run or close(): now the L3 child reports the chip it lost up at once, the
    # L4 shows it and logs it, and the L3 child goes on serving its other chip.
    w4 = nested_tree(closing, children=1)
    marks = tmp_path / "pids"
    fwd = _vadd_noting_its_chips(w4, marks)
    records = _Records()
    logging.getLogger("simpler").addHandler(records)
    try:
        w4.init()
        a, c = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
        a.array((N,), F32)[...] = 1
        ta = args((a.tensor((N,), F32), IN), (a.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT))
        w4.run(lambda o, _a, _c: o.submit_next_level(fwd, ta, worker=0))
        chips = json.loads(marks.read_text())
        (l3,) = w4.child_pids()
        assert [str(s) for s in w4.child_status()] == ["worker 0: usable"]
        os.kill(chips[1], signal.SIGKILL)
        _await(lambda: w4.child_status()[0].below_lost > 0, "the L4 saw the chip lost below its L3 child")
        (status,) = w4.child_status()
        assert not status.lost and status.below_lost == 1, status
        assert status.below.startswith("chip 1: lost (") and "signal 9" in status.below, status
        assert str(status).startswith("worker 0: usable; lost below it: chip 1: lost ("), status
        _await(lambda: any("chip 1: lost" in m for m in records.messages), "the L4 logged it")
        (logged,) = [m for m in records.messages if m.startswith("L4: ")]
        assert logged == f"L4: {status}", records.messages
        assert alive(l3)
        c.array((N,), F32)[...] = 0
        w4.run(lambda o, _a, _c: o.submit_next_level(fwd, ta, worker=0))  # chip 0 still serves
        assert (c.array((N,), F32) == 2).all()
        pids = [l3, *chips]
        w4.close()
        assert wait_gone(pids) == []
    finally:
        logging.getLogger("simpler").removeHandler(records)


def test_a_chip_lost_two_levels_down_reaches_the_top(closing, tmp_path):
    w5 = Worker(level=5)
    closing(w5)
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=2))
    w5.add_worker(w4)
    marks = tmp_path / "pids"
    h3 = _vadd_noting_its_chips(w5, marks)
    h4 = w5.register(lambda o, a, cfg: o.submit_next_level(h3, a, worker=0))
    w5.init()
    x, z = w5.create_buffer(N * 4), w5.create_buffer(N * 4)
    ta = args((x.tensor((N,), F32), IN), (x.tensor((N,), F32), IN), (z.tensor((N,), F32), OUT))
    w5.run(lambda o, _a, _c: o.submit_next_level(h4, ta, worker=0))
    chips = json.loads(marks.read_text())
    os.kill(chips[1], signal.SIGKILL)
    _await(lambda: w5.child_status()[0].below_lost > 0, "the L5 saw the chip lost two levels down")
    (status,) = w5.child_status()
    assert not status.lost and status.below_lost == 1 and "signal 9" in status.below, status
    assert str(status).startswith("worker 0: usable; lost below it: worker 0 → chip 1: lost ("), status
