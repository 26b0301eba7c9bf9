"""domain_kernel_api.h end to end (tests/py/chip_sources/window_sync_kernels.cpp): a
kernel on chip 1 waits for a word in chip 0's window that a kernel on chip 0
sets, the two tasks having no dependency between them; and a wait whose notifier
never comes fails the task with the kernel's timeout message."""

import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from worker_helpers import CHIP_SOURCES, args, closing, time_bound  # noqa: F401

U32 = DataType.UINT32
OUT, IN = TensorArgType.OUTPUT_EXISTING, TensorArgType.INPUT
WINDOW_KERNELS = CHIP_SOURCES / "window_sync_kernels.cpp"


def make(closing):
    w = Worker(level=3, num_chips=2, task_timeout=60)
    closing(w)
    notify = ChipCallable.from_source(WINDOW_KERNELS, "test.window_notify")
    wait = ChipCallable.from_library(notify.library, "test.window_wait")
    handles = [w.register(c) for c in (notify, wait, ChipCallable("std.copy"))]
    w.init()
    zero = w.create_buffer(8)
    view_array(zero.tensor((2,), U32))[...] = 0
    return w, zero, *handles


def test_a_task_on_chip_1_waits_for_a_word_a_task_on_chip_0_sets(closing):
    w, zero, notify, wait, copy = make(closing)
    seen = w.create_buffer(8)
    view_array(seen.tensor((2,), U32))[...] = 0

    def orch(o, _a, _c):
        with o.allocate_domain("sync", workers=[0, 1], window_size=256, buffers={"flag": 8}) as dom:
            for chip in dom.workers:  # both flags start at 0
                o.submit_next_level(
                    copy,
                    args((zero.tensor((2,), U32), IN), (dom.buffer("flag", chip).tensor((2,), U32), OUT)),
                    worker=chip,
                )
            # The waiter first: it can finish only once the notifier, a task with no edge to it, has run at
            # the same time on the other chip (each names only its own flag; the peer's goes by peer_address).
            o.submit_next_level(
                wait,
                args((dom.buffer("flag", 1).tensor((2,), U32), OUT), scalars=(0, 7, 20_000, *dom.context(1))),
                worker=1,
            )
            o.submit_next_level(
                notify, args((dom.buffer("flag", 0).tensor((2,), U32), OUT), scalars=(7, *dom.context(0))), worker=0
            )
            o.submit_next_level(
                copy, args((dom.buffer("flag", 1).tensor((2,), U32), IN), (seen.tensor((2,), U32), OUT)), worker=1
            )

    w.run(orch)
    assert view_array(seen.tensor((2,), U32))[1] == 7


def test_a_wait_whose_notifier_never_comes_fails_with_the_timeout(closing):
    w, zero, _notify, wait, copy = make(closing)

    def orch(o, _a, _c):
        with o.allocate_domain("sync", workers=[0, 1], window_size=256, buffers={"flag": 8}) as dom:
            o.submit_next_level(
                copy, args((zero.tensor((2,), U32), IN), (dom.buffer("flag", 0).tensor((2,), U32), OUT)), worker=0
            )
            o.submit_next_level(
                copy, args((zero.tensor((2,), U32), IN), (dom.buffer("flag", 1).tensor((2,), U32), OUT)), worker=1
            )
            o.submit_next_level(
                wait,
                args((dom.buffer("flag", 1).tensor((2,), U32), OUT), scalars=(0, 5, 150, *dom.context(1))),
                worker=1,
            )

    with pytest.raises(RuntimeError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "kernel 'test.window_wait'" in msg and "waited 150 ms for rank 0's word at 0x" in msg, msg
    assert "to reach 5: it is 0" in msg, msg
    assert w.device_stats(0)["window_bytes_in_use"] == 0
