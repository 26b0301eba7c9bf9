"""Checked mode end to end: a chip kernel that writes past its view fails its
task under CallConfig(checked=True), naming the callable, the tensor and its
buffer, and the host bytes — past the view and in it — stay as they were; a
clean checked run computes what a staged one does. The same kernel under the
default (staged) mode succeeds and leaves the host intact, and under zero-copy
overwrites the host bytes past its view."""

import numpy as np
import pytest

from simpler import CallConfig, DataType, TensorArgType, Worker
from worker_helpers import args, closing, kernel_callable, time_bound  # noqa: F401

U8 = DataType.UINT8
OUT = TensorArgType.OUTPUT_EXISTING
VIEW, BUF = 128, 256  # the view is the first VIEW bytes of a BUF-byte buffer


def setup(closing):
    w = Worker(level=3, num_chips=1, task_timeout=30)
    closing(w)
    overrun = w.register(kernel_callable("test.overrun"))
    w.init()
    buf = w.create_buffer(BUF)
    host = buf.array((BUF,), U8)
    host[:VIEW] = 0
    host[VIEW:] = 0x55
    return w, overrun, buf, host


def run_overrun(w, overrun, buf, past, cfg):
    w.run(
        lambda o, _a, _c: o.submit_next_level(
            overrun, args((buf.tensor((VIEW,), U8), OUT), scalars=(past,)), cfg, worker=0
        )
    )


def test_a_write_past_the_view_fails_a_checked_task_and_leaves_the_host_intact(closing):
    w, overrun, buf, host = setup(closing)
    with pytest.raises(RuntimeError) as e:
        run_overrun(w, overrun, buf, 8, CallConfig(checked=True))
    msg = str(e.value)
    del e  # its traceback holds this frame, and with it `host`, a view the Worker's close() must not find alive
    assert "callable 'test.overrun'" in msg and "on chip 0 failed: TASK_FAILED" in msg, msg
    assert (
        f"checked run of 'test.overrun': tensor 0 (buffer {buf.identity}): wrote past the end of its view: "
        "8 bytes changed outside the views the task may write, as far as 8 bytes past the view's last byte; "
        "nothing was copied back"
    ) in msg, msg
    assert (host[VIEW:] == 0x55).all(), "the bytes past the view are intact"
    assert (host[:VIEW] == 0).all(), "a failed checked run copies nothing back"

    run_overrun(w, overrun, buf, 0, CallConfig(checked=True))  # the chip keeps serving; a clean run copies back
    assert (host[:VIEW] == 0x11).all()
    assert (host[VIEW:] == 0x55).all()


def test_checked_wins_over_zero_copy(closing):
    w, overrun, buf, host = setup(closing)
    with pytest.raises(RuntimeError, match="wrote past the end of its view"):
        run_overrun(w, overrun, buf, 4, CallConfig(zero_copy=True, checked=True))
    assert (host[VIEW:] == 0x55).all()


def test_staged_and_zero_copy_runs_behave_as_before(closing):
    w, overrun, buf, host = setup(closing)
    run_overrun(w, overrun, buf, 8, None)  # staged (the default): the stray write lands in chip memory
    assert (host[:VIEW] == 0x11).all()
    assert (host[VIEW:] == 0x55).all()
    host[:VIEW] = 0
    run_overrun(w, overrun, buf, 8, CallConfig(zero_copy=True))  # zero-copy trusts the kernel
    assert (host[:VIEW] == 0x11).all()
    np.testing.assert_array_equal(host[VIEW : VIEW + 8], np.full(8, 0xEE, np.uint8))
    assert (host[VIEW + 8 :] == 0x55).all()
