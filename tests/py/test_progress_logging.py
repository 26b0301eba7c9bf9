"""Progress (Worker.progress, show_progress) and the `simpler` logger: counts
are exact after a run, a blocked task shows as running on its child, the
display writes what the Worker did, and children starting, submits refused and
children lost are logged."""

import io
import logging
import os
import signal
import threading
import time

import numpy as np
import pytest

import simpler
from simpler import DataType, Progress, TensorArgType, Worker, show_progress
from worker_helpers import Gate, args, closing, kernel_callable, time_bound  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32


def scale(a):
    a.array(1)[:] = a.array(0) * 2


def test_counts_are_exact_after_a_run(closing):
    w = Worker(num_chips=1, num_sub_workers=2)
    closing(w)
    fn = w.register(scale)
    w.init()
    before = w.progress()
    assert (before.submitted, before.done, before.running) == (0, 0, [])
    assert list(before.children) == ["chip 0", "sub-worker 0", "sub-worker 1"]
    src = w.create_buffer(64 * 4)
    dst = w.create_buffer(64 * 4 * 10)
    src.array((64,), F32)[:] = 1

    def orch(o, _a, _c):
        for i in range(10):
            o.submit_sub(fn, args((src.tensor((64,), F32), IN), (dst.tensor((64,), F32, byte_offset=i * 256), OUT)))

    w.run(orch)
    p = w.progress()
    assert isinstance(p, Progress)
    assert (p.submitted, p.unfinished, p.done, p.lost, p.running) == (10, 0, 10, 0, [])
    assert p.children["chip 0"].done == 0
    assert p.children["sub-worker 0"].done + p.children["sub-worker 1"].done == 10
    assert "10/10 tasks done · idle" in p.line()
    np.testing.assert_array_equal(dst.array((640,), F32), 2)


def test_a_blocked_task_shows_as_running_on_its_chip(closing, tmp_path):
    w = Worker(num_chips=2)
    closing(w)
    gate_fn = w.register(kernel_callable("test.gate"))
    w.init()
    gate = Gate(w, tmp_path)
    errors = []

    def run():
        try:
            w.run(lambda o, _a, _c: gate.submit(o, gate_fn, chip=1))
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while w.progress().running != ["chip 1"]:
            assert time.monotonic() < deadline, w.progress()
            time.sleep(0.005)
        p = w.progress()
        assert (p.submitted, p.unfinished) == (1, 1)
        assert "running chip 1" in p.line()
    finally:
        gate.open()
        t.join()
    assert not errors, errors
    p = w.progress()
    assert (p.done, p.running, p.children["chip 1"].done) == (1, [], 1)


def test_show_progress_writes_lines_and_ends_on_the_final_counts(closing):
    w = Worker(num_sub_workers=1)
    closing(w)
    fn = w.register(scale)
    w.init()
    src = w.create_buffer(16)
    dst = w.create_buffer(16)
    out = io.StringIO()
    with show_progress(w, interval=0.01, file=out, use_tqdm=False):
        for _ in range(3):
            w.run(lambda o, _a, _c: o.submit_sub(fn, args((src.tensor((4,), F32), IN), (dst.tensor((4,), F32), OUT))))
    lines = out.getvalue().splitlines()
    assert lines, "nothing was shown"
    assert lines[-1] == "L3: 3/3 tasks done · idle · sub-worker 0 3", lines
    assert len(lines) == len(set(lines)), "a line is written only when it changed"


def test_show_progress_refuses_bad_input_and_an_uninitialized_worker(closing):
    w = Worker(num_sub_workers=1)
    closing(w)
    with pytest.raises(RuntimeError, match="call init"):
        with show_progress(w):
            pass
    w.init()
    with pytest.raises(ValueError, match=r"show_progress\.interval"):
        with show_progress(w, interval=0):
            pass
    with pytest.raises(TypeError, match=r"show_progress\.worker"):
        with show_progress("L3"):  # type: ignore[arg-type]
            pass
    try:
        import tqdm  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="tqdm is not installed"):
            with show_progress(w, use_tqdm=True):
                pass


def test_the_simpler_logger_records_starts_refusals_and_a_lost_child(closing, caplog):
    caplog.set_level(logging.INFO, logger="simpler")
    w = Worker(num_chips=2, num_sub_workers=1)
    closing(w)
    vadd = w.register(simpler.ChipCallable("std.vector_add"))
    w.init()
    started = [r for r in caplog.records if "started" in r.getMessage()]
    assert len(started) == 1 and started[0].levelno == logging.INFO, caplog.text
    pids = w.child_pids()
    assert started[0].getMessage() == f"L3: started 2 chips, 1 sub-worker (pids {', '.join(map(str, pids))})"

    t = w.create_buffer(16).tensor((4,), F32)
    with pytest.raises(ValueError) as refused:  # the engine refuses: there is no chip 7
        w.run(lambda o, _a, _c: o.submit_next_level(vadd, args((t, IN), (t, IN), (t, OUT)), worker=7))
    logged = [r for r in caplog.records if "submit refused" in r.getMessage()]
    assert len(logged) == 1 and str(refused.value) in logged[0].getMessage(), caplog.text

    os.kill(pids[0], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not w.child_status()[0].lost:
        assert time.monotonic() < deadline, w.child_status()
        time.sleep(0.01)
    a = w.create_buffer(16)
    w.run(
        lambda o, _a, _c: o.submit_next_level(
            vadd,
            args((a.tensor((4,), F32), IN), (a.tensor((4,), F32), IN), (w.create_buffer(16).tensor((4,), F32), OUT)),
            worker=1,
        )
    )
    # The loss is logged by the log's own thread, woken by the status channel: it may come after run().
    deadline = time.monotonic() + 10
    while not (lost := [r for r in caplog.records if r.levelno == logging.WARNING]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(lost) == 1, caplog.text
    assert lost[0].getMessage().startswith("L3: chip 0 lost (") and "signal 9" in lost[0].getMessage()
    assert w.progress().lost == 1 and w.progress().children["chip 0"].lost
    w.close()
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1, "each loss is logged once"
