"""Communication domains (Orchestrator.allocate_domain): symmetric VMM_WINDOW
windows on the member chips, shared between the chip processes — a task on one
member reads and writes another member's window; the domain's shape (ranks,
bases, buffers, context); every refusal names what was wrong and changes
nothing; leaving the domain while tasks naming it are in flight lets them
finish with the right bytes, then frees the windows."""

import time

import numpy as np
import pytest

from simpler import (
    AddressSpace,
    BackendKind,
    ChipCallable,
    DataType,
    Domain,
    TensorArgType,
    WindowBuffer,
    Worker,
)
from worker_helpers import Gate, args, closing, kernel_callable, time_bound  # noqa: F401

F32 = DataType.FLOAT32
IN = TensorArgType.INPUT
OUT = TensorArgType.OUTPUT_EXISTING
N = 256  # float32 elements per buffer
NB = N * 4


def window_stats(w, chip):
    s = w.device_stats(chip)
    return s["window_bytes_in_use"], s["live_windows"]


def wait_windows_freed(w, chips, bound_s=30.0):
    """A hang guard, not a timing claim: the release runs on the engine's thread
    once the tasks are done; waits (bounded) until every chip's windows are free."""
    deadline = time.monotonic() + bound_s
    while any(window_stats(w, c) != (0, 0) for c in chips):
        assert time.monotonic() < deadline, [w.device_stats(c) for c in chips]
        time.sleep(0.01)


def make(closing, num_chips=2, **kw):
    w = Worker(level=3, num_chips=num_chips, **kw)
    closing(w)
    copy = w.register(ChipCallable("std.copy"))
    return w, copy


def test_peer_read_and_peer_write_between_two_chips(closing):
    w, copy = make(closing)
    w.init()
    src = w.create_buffer(NB)
    src.array((N,), F32)[...] = np.arange(N, dtype=np.float32)
    back_x = w.create_buffer(NB)
    back_y = w.create_buffer(NB)
    back_x.array((N,), F32)[...] = -1
    back_y.array((N,), F32)[...] = -1
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4 << 10, buffers={"x": NB, "y": NB}) as dom:
            seen["dom"] = dom
            x0, x1, y1 = dom.buffer("x", 0), dom.buffer("x", 1), dom.buffer("y", 1)
            o.copy_to(x0.tensor((N,), F32), src.tensor((N,), F32))  # on chip 0
            # chip 1 reads chip 0's window (peer read) into its own
            o.submit_next_level(copy, args((x0.tensor((N,), F32), IN), (x1.tensor((N,), F32), OUT)), worker=1)
            # chip 0 stores into chip 1's window (peer write)
            o.submit_next_level(copy, args((x0.tensor((N,), F32), IN), (y1.tensor((N,), F32), OUT)), worker=0)
            o.copy_from(back_x.tensor((N,), F32), x1.tensor((N,), F32))  # on chip 1
            o.copy_from(back_y.tensor((N,), F32), y1.tensor((N,), F32))
            seen["in_use"] = [window_stats(w, c) for c in (0, 1)]

    w.run(orch)
    expected = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(back_x.array((N,), F32), expected)
    np.testing.assert_array_equal(back_y.array((N,), F32), expected)
    assert seen["in_use"] == [(4 << 10, 1), (4 << 10, 1)]
    wait_windows_freed(w, (0, 1))
    assert seen["dom"].released


def test_the_domain_says_ranks_bases_buffers_and_context(closing):
    w, _ = make(closing, num_chips=3)
    w.init()
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("ring", workers=[2, 0], window_size=8192,
                               buffers=[("a", 10), ("b", 100), ("c", 64)]) as dom:
            seen["dom"] = dom
            assert isinstance(dom, Domain)
            assert (dom.name, dom.workers, dom.size) == ("ring", (2, 0), 2)
            assert (dom.rank(2), dom.rank(0)) == (0, 1)
            with pytest.raises(ValueError, match=r"domain 'ring': chip 1 is not a member \(chips 2, 0\)"):
                dom.rank(1)
            b2, b0 = dom.window_base(2), dom.window_base(0)
            assert b2 != b0 and b2 % 4096 == 0 and b0 % 4096 == 0
            assert dom.context(0) == [1, 2, b2, b0] and dom.context(2) == [0, 2, b2, b0]
            assert set(dom.buffers) == {2, 0} and list(dom.buffers[0]) == ["a", "b", "c"]
            for chip, base in ((2, b2), (0, b0)):
                bufs = [dom.buffer(n, chip) for n in ("a", "b", "c")]
                assert [b.base - base for b in bufs] == [0, 64, 192]  # in order, each on 64 bytes
                assert [b.nbytes for b in bufs] == [10, 100, 64]
                for b in bufs:
                    assert isinstance(b, WindowBuffer) and b.chip == chip
                    d = b.descriptor
                    assert (d.backend_kind, d.address_space) == (BackendKind.VMM_WINDOW, AddressSpace.DEVICE)
                    assert len(d.body) == 8 and d.address == b.base
                    assert w._core.device_owner(b.identity) == chip
            ids = {dom.buffer(n, c).identity for n in ("a", "b", "c") for c in (2, 0)}
            assert len(ids) == 6, "every (chip, buffer) has its own identity"
            with pytest.raises(KeyError, match="no buffer 'z'"):
                dom.buffer("z", 0)
            t = dom.buffer("b", 0).tensor()
            assert tuple(t.shapes) == (100,) and t.dtype == DataType.UINT8

    w.run(orch)
    assert seen["dom"].released
    wait_windows_freed(w, (0, 1, 2))
