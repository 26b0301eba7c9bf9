"""Communication domains (Orchestrator.allocate_domain): symmetric VMM_WINDOW
windows on the member chips, shared between the chip processes — a task on one
member reads and writes another member's window; the domain's shape (ranks,
bases, buffers, context); every refusal names what was wrong and changes
nothing; leaving the domain while tasks naming it are in flight lets them
finish with the right bytes, then frees the windows."""

import ctypes
import os
import signal
import threading
import time

import numpy as np
import pytest

from simpler import (
    AddressSpace,
    BackendKind,
    ChipCallable,
    DataType,
    Domain,
    EdgeKind,
    TensorArgType,
    WindowBuffer,
    Worker,
)
from simpler.abi import WINDOW_SCOPE
from worker_helpers import CHIP_SOURCES, Gate, args, closing, kernel_callable, time_bound  # noqa: F401

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
        with o.allocate_domain(
            "ring", workers=[2, 0], window_size=8192, buffers=[("a", 10), ("b", 100), ("c", 64)]
        ) as dom:
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
                    assert w._state.core.device_owner(b.identity) == chip
            ids = {dom.buffer(n, c).identity for n in ("a", "b", "c") for c in (2, 0)}
            assert len(ids) == 6, "every (chip, buffer) has its own identity"
            with pytest.raises(KeyError, match="no buffer 'z'"):
                dom.buffer("z", 0)
            t = dom.buffer("b", 0).tensor()
            assert tuple(t.shapes) == (100,) and t.dtype == DataType.UINT8

    w.run(orch)
    assert seen["dom"].released
    wait_windows_freed(w, (0, 1, 2))


def test_a_kernel_reaches_its_peers_window_through_the_context(closing):
    w, _ = make(closing, num_chips=3)
    put = w.register(ChipCallable.from_source(CHIP_SOURCES / "window_kernels.cpp", "window.put_next"))
    w.init()
    backs = [w.create_buffer(NB) for _ in range(3)]
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("ring", workers=[1, 2, 0], window_size=2 * NB, buffers=[("pad", 64), ("x", NB)]) as dom:
            off = dom.buffer("x", 0).offset
            for chip in dom.workers:
                peer = dom.workers[(dom.rank(chip) + 1) % dom.size]
                o.submit_next_level(
                    put,
                    args((dom.buffer("x", peer).tensor((N,), F32), OUT), scalars=(*dom.context(chip), off, N)),
                    worker=chip,
                )
            for chip in dom.workers:
                o.copy_from(backs[chip].tensor((N,), F32), dom.buffer("x", chip).tensor((N,), F32))
            seen["ranks"] = {c: dom.rank(c) for c in dom.workers}

    w.run(orch)
    for chip in range(3):
        writer = next(c for c, r in seen["ranks"].items() if (r + 1) % 3 == seen["ranks"][chip])
        expected = seen["ranks"][writer] * 1000 + np.arange(N, dtype=np.float32)
        np.testing.assert_array_equal(backs[chip].array((N,), F32), expected)


def test_a_refused_domain_changes_nothing_and_names_what_was_wrong(closing):
    w, copy = make(closing, window_heap_bytes=64 << 10)
    w.init()
    before = [w.device_stats(c) for c in (0, 1)]
    cases = [
        (dict(name="", workers=[0], window_size=64), ValueError, "name must be a non-empty string"),
        (dict(name="a", workers=[], window_size=64), ValueError, "workers must name at least one chip"),
        (
            dict(name="a", workers=[0, 2], window_size=64),
            ValueError,
            r"workers\[1\]=2 is not a chip of this Worker \(it has 2 chips\)",
        ),
        (dict(name="a", workers=[1, 1], window_size=64), ValueError, "chip 1 is listed twice in workers"),
        (dict(name="a", workers=[0], window_size=0), ValueError, "window_size must be > 0"),
        (dict(name="a", workers=[0], window_size=1 << 20), ValueError, "larger than a chip's window heap"),
        (dict(name="a", workers=[0], window_size=128, buffers={"": 8}), ValueError, "name must be non-empty"),
        (
            dict(name="a", workers=[0], window_size=128, buffers=[("x", 8), ("x", 8)]),
            ValueError,
            "buffer name 'x' appears twice",
        ),
        (
            dict(name="a", workers=[0], window_size=100, buffers={"x": 8, "y": 40}),
            ValueError,
            r"do not fit in window_size 100 bytes \(x 8 B at 0, y 40 B at 64",
        ),
        (dict(name="a", workers=[0], window_size=128, buffers={"x": -1}), ValueError, r"buffers\['x'\]"),
        (dict(name="a", workers=["0"], window_size=64), TypeError, r"workers\[0\]"),
        (dict(name=7, workers=[0], window_size=64), TypeError, "allocate_domain.name"),
        (dict(name="a", workers=[0], window_size=64, buffers=["x"]), TypeError, r"buffers\[0\]"),
    ]
    seen = {}

    def orch(o, _a, _c):
        for kw, error, message in cases:
            with pytest.raises(error, match=message):
                o.allocate_domain(**kw)
        with o.allocate_domain("tp", workers=[0], window_size=40 << 10):
            with pytest.raises(ValueError, match=r"a domain of that name is live \(chips 0\)"):
                o.allocate_domain("tp", workers=[1], window_size=64)
            with pytest.raises(
                RuntimeError,
                match=r"the window heaps of chips 0, 1 have no common free range of "
                r"32768 bytes .*chip 0: 40960 in use in 1 windows",
            ):
                o.allocate_domain("dp", workers=[0, 1], window_size=32 << 10)
            seen["held"] = [w.device_stats(c) for c in (0, 1)]
        # after the refusals a good domain works, on the same chips
        with o.allocate_domain("dp", workers=[0, 1], window_size=32 << 10, buffers={"x": NB}) as dom:
            src = seen["src"] = w.create_buffer(NB)
            src.array((N,), F32)[...] = 7
            o.copy_to(dom.buffer("x", 0).tensor((N,), F32), src.tensor((N,), F32))
            o.submit_next_level(
                copy,
                args((dom.buffer("x", 0).tensor((N,), F32), IN), (dom.buffer("x", 1).tensor((N,), F32), OUT)),
                worker=1,
            )
            o.copy_from(src.tensor((N,), F32), dom.buffer("x", 1).tensor((N,), F32))

    w.run(orch)
    assert seen["held"][0]["window_bytes_in_use"] == 40 << 10 and seen["held"][1]["window_bytes_in_use"] == 0
    np.testing.assert_array_equal(seen["src"].array((N,), F32), np.full(N, 7, np.float32))
    wait_windows_freed(w, (0, 1))
    assert [w.device_stats(c) for c in (0, 1)] == before


def test_a_window_tensor_is_refused_on_a_sub_worker_and_on_a_chip_outside_the_domain(closing):
    w = Worker(level=3, num_chips=3, num_sub_workers=1)
    closing(w)
    copy = w.register(ChipCallable("std.copy"))
    sub = w.register(lambda m: None)
    w.init()
    host_buf = w.create_buffer(NB)
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB}) as dom:
            x1 = dom.buffer("x", 1).tensor((N,), F32)
            with pytest.raises(ValueError) as on_sub:
                o.submit_sub(sub, args((x1, IN)))
            with pytest.raises(ValueError) as outside:
                o.submit_next_level(copy, args((x1, IN), (host_buf.tensor((N,), F32), OUT)), worker=2)
            with pytest.raises(ValueError) as outside_in_group:
                o.submit_next_level_group(copy, [args((x1, IN), (host_buf.tensor((N,), F32), OUT))], workers=[2])
            seen["n"] = len(o.submitted)
        seen.update(sub=str(on_sub.value), outside=str(outside.value), group=str(outside_in_group.value))

    w.run(orch)
    assert seen["n"] == 0, "a refused submit recorded a task"
    assert (
        "window buffer 'x' of chip 1 in domain 'tp' (chips 0, 1) may only be named by a task on a chip of "
        "that domain, not by a host sub-worker"
    ) in seen["sub"]
    assert "window buffer 'x' of chip 1 in domain 'tp' (chips 0, 1)" in seen["outside"]
    assert seen["outside"].endswith("not by chip 2")
    assert "not by chip 2" in seen["group"]
    wait_windows_freed(w, (0, 1))


def test_leaving_the_domain_with_tasks_in_flight_keeps_their_bytes_then_frees(closing, tmp_path):
    w, copy = make(closing)
    gate_k = w.register(kernel_callable("test.gate"))
    w.init()
    src = w.create_buffer(NB)
    src.array((N,), F32)[...] = np.arange(N, dtype=np.float32) * 2
    out = w.create_buffer(NB)
    out.array((N,), F32)[...] = -1
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB}) as dom:
            x0, x1 = dom.buffer("x", 0).tensor((N,), F32), dom.buffer("x", 1).tensor((N,), F32)
            seen["x0"] = x0
            g = Gate(w, tmp_path, hold=x1)  # holds chip 1 back: its output is x1
            o.copy_to(x0, src.tensor((N,), F32))
            g.submit(o, gate_k, chip=1)
            o.submit_next_level(copy, args((x0, IN), (x1, OUT)), worker=1)  # after the gate (x1)
            o.copy_from(out.tensor((N,), F32), x1)
        # released: refused at once, while the gate still holds its tasks
        seen["held"] = [window_stats(w, c) for c in (0, 1)]
        with pytest.raises(ValueError) as late:
            o.copy_to(x0, src.tensor((N,), F32))
        seen["late"] = str(late.value)
        g.open()

    w.run(orch)
    assert seen["held"] == [(4096, 1), (4096, 1)], "the windows went while tasks still named them"
    assert "window buffer 'x' of chip 0 in domain 'tp'" in seen["late"] and "was released" in seen["late"]
    np.testing.assert_array_equal(out.array((N,), F32), np.arange(N, dtype=np.float32) * 2)
    wait_windows_freed(w, (0, 1))

    def after(o, _a, _c):  # once freed, its identity is stale: refused in any later run
        with pytest.raises(ValueError, match=r"stale descriptor .* was released"):
            o.submit_next_level(copy, args((seen["x0"], IN), (out.tensor((N,), F32), OUT)), worker=0)

    w.run(after)


def test_the_next_domain_on_a_released_window_reads_zeros_not_the_previous_ones_bytes(closing):
    w, _copy = make(closing)
    w.init()
    secret = w.create_buffer(NB)
    secret.array((N,), F32)[...] = np.arange(1, N + 1, dtype=np.float32)
    seen = [w.create_buffer(NB) for _ in range(2)]
    bases = {}

    def orch(o, _a, _c):
        with o.allocate_domain("first", workers=[0, 1], window_size=4096, buffers={"x": NB}) as dom:
            bases["first"] = [dom.window_base(c) for c in (0, 1)]
            for c in (0, 1):
                o.copy_to(dom.buffer("x", c).tensor((N,), F32), secret.tensor((N,), F32))
        wait_windows_freed(w, (0, 1))  # so the next domain is carved on the same pages
        with o.allocate_domain("second", workers=[0, 1], window_size=4096, buffers={"x": NB}) as dom:
            bases["second"] = [dom.window_base(c) for c in (0, 1)]
            for c in (0, 1):
                o.copy_from(seen[c].tensor((N,), F32), dom.buffer("x", c).tensor((N,), F32))

    for b in seen:
        b.array((N,), F32)[...] = -1
    w.run(orch)
    assert bases["second"] == bases["first"], "the next domain was carved elsewhere: the test proves nothing"
    for c in (0, 1):
        np.testing.assert_array_equal(seen[c].array((N,), F32), np.zeros(N, dtype=np.float32))


def test_a_released_domains_name_is_taken_until_its_windows_are_freed(closing, tmp_path):
    w, _copy = make(closing)
    gate_k = w.register(kernel_callable("test.gate"))
    w.init()
    src = w.create_buffer(NB)
    src.array((N,), F32)[...] = 7
    out = w.create_buffer(NB)
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB}) as dom:
            seen["old"] = [dom.window_base(c) for c in (0, 1)]
            x1 = dom.buffer("x", 1).tensor((N,), F32)
            g = Gate(w, tmp_path, hold=x1)  # holds chip 1's tasks on the window back
            g.submit(o, gate_k, chip=1)
            o.copy_to(x1, src.tensor((N,), F32))
        opened = threading.Event()

        def open_later():
            time.sleep(0.2)  # not a timing claim: the carve below is right whenever the gate opens
            opened.set()
            g.open()

        t = threading.Thread(target=open_later)
        t.start()
        try:
            # The old "tp" still holds its windows: this waits for its tasks, then carves.
            with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB}) as again:
                seen["opened"] = opened.is_set()
                seen["new"] = [again.window_base(c) for c in (0, 1)]
                o.copy_from(out.tensor((N,), F32), again.buffer("x", 1).tensor((N,), F32))
        finally:
            t.join()

    w.run(orch)
    assert seen["opened"], "allocate_domain returned before the old domain's tasks finished"
    assert seen["new"] == seen["old"], "the old windows were not freed before the name was taken again"
    np.testing.assert_array_equal(out.array((N,), F32), np.zeros(N, dtype=np.float32))


def test_a_freed_domains_buffer_is_refused_naming_the_domain_and_a_domain_left_open_ends_with_the_run(closing):
    w, copy = make(closing)
    w.init()
    out = w.create_buffer(NB)
    seen = {}

    def orch(o, _a, _c):
        dom = o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB})
        x0 = dom.buffer("x", 0).tensor((N,), F32)
        dom.release()
        dom.release()  # idempotent
        wait_windows_freed(w, (0, 1))  # nothing named it: freed without waiting for a task
        with pytest.raises(ValueError) as freed:
            o.submit_next_level(copy, args((x0, IN), (out.tensor((N,), F32), OUT)), worker=0)
        seen["freed"] = str(freed.value)
        seen["open"] = o.allocate_domain("open", workers=[1], window_size=4096)  # never released by the orch fn
        seen["held"] = window_stats(w, 1)

    w.run(orch)
    assert (
        "window buffer 'x' of chip 0 in domain 'tp' was released (the domain's block ended or release() was called)"
    ) in seen["freed"]
    assert seen["held"] == (4096, 1)
    assert seen["open"].released
    wait_windows_freed(w, (0, 1))


def test_a_peer_read_is_ordered_after_the_write_on_the_other_chip_by_the_usual_inference(closing, tmp_path):
    w, copy = make(closing, record_edges=True)
    gate_k = w.register(kernel_callable("test.gate"))
    w.init()
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": NB, "y": NB}) as dom:
            x0, y1 = dom.buffer("x", 0).tensor((N,), F32), dom.buffer("y", 1).tensor((N,), F32)
            g = Gate(w, tmp_path, hold=x0)  # chip 0 writes its x, held in flight until open()
            seen["write"] = g.submit(o, gate_k, chip=0)
            seen["read"] = o.submit_next_level(copy, args((x0, IN), (y1, OUT)), worker=1)  # chip 1 reads it
            seen["x0"] = dom.buffer("x", 0).identity
            g.open()

    w.run(orch)
    edges = [e for e in w.take_edge_log() if e.successor == seen["read"].id]
    assert len(edges) == 1, edges
    e = edges[0]
    assert (e.predecessor, e.kind, e.identity, e.scope) == (
        seen["write"].id,
        EdgeKind.READ_AFTER_WRITE,
        seen["x0"],
        WINDOW_SCOPE,
    )
    assert "(window)" in repr(e)


def test_a_lost_chip_may_not_join_a_domain(closing):
    w, _ = make(closing)
    w.init()
    os.kill(w.child_pids()[1], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not w.child_status()[1].lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.child_status()[1].lost, w.child_status()
    seen = {}

    def orch(o, _a, _c):
        with pytest.raises(ValueError, match=r"allocate_domain 'tp': chip 1 is lost \(.*signal 9"):
            o.allocate_domain("tp", workers=[0, 1], window_size=4096)
        with o.allocate_domain("tp", workers=[0], window_size=4096):
            seen["held"] = [window_stats(w, c) for c in (0, 1)]

    w.run(orch)
    assert seen["held"] == [(4096, 1), (0, 0)]
    wait_windows_freed(w, (0, 1))


def test_a_domain_in_a_level_3_worker_below_a_level_4_worker(closing):
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=2))
    closing(w4)
    copy = w4.register(ChipCallable("std.copy"))

    def inner(o, a, _c):  # runs in the L3 child: its chips, its windows
        with o.allocate_domain("tp", workers=[1, 0], window_size=4096, buffers={"x": NB}) as dom:
            x0, x1 = dom.buffer("x", 0).tensor((N,), F32), dom.buffer("x", 1).tensor((N,), F32)
            o.copy_to(x1, a[0])
            o.submit_next_level(copy, args((x1, IN), (x0, OUT)), worker=0)  # chip 0 reads chip 1's window
            o.copy_from(a[1], x0)

    fn = w4.register(inner)
    w4.init()
    src, dst = w4.create_buffer(NB), w4.create_buffer(NB)
    src.array((N,), F32)[...] = np.arange(N, dtype=np.float32) + 5
    dst.array((N,), F32)[...] = 0
    w4.run(
        lambda o, _a, _c: o.submit_next_level(
            fn, args((src.tensor((N,), F32), IN), (dst.tensor((N,), F32), OUT)), worker=0
        )
    )
    np.testing.assert_array_equal(dst.array((N,), F32), np.arange(N, dtype=np.float32) + 5)
    with pytest.raises(
        ValueError,
        match=r"allocate_domain on L4 \(level 4, 0 chips\): windows belong to the chips "
        "of a level-3 Worker",
    ):
        w4.run(lambda o, _a, _c: o.allocate_domain("tp", workers=[0], window_size=4096))


def test_the_window_heap_size_is_a_worker_option():
    assert Worker(level=3, num_chips=1).config.window_heap_bytes == 64 << 20
    assert Worker(level=3, num_chips=1, window_heap_bytes=1 << 20).config.window_heap_bytes == 1 << 20
    with pytest.raises(ValueError, match=r"WorkerConfig.window_heap_bytes: must be > 0 and at most 64 TiB \(got 0\)"):
        Worker(level=3, num_chips=1, window_heap_bytes=0)
    with pytest.raises(ValueError, match="window_heap_bytes"):
        Worker(level=3, num_chips=1, window_heap_bytes=-1)


def _touch_window(mapped_args):
    """A sub task that reads one byte at the address its scalar names (a window's)."""
    ctypes.c_uint8.from_address(mapped_args.scalars[0]).value  # noqa: B018


def test_a_sub_worker_cannot_reach_the_window_bytes(closing):
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    closing(w)
    touch = w.register(_touch_window)
    w.init()
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0], window_size=4096) as dom:
            seen["base"] = dom.window_base(0)
            o.submit_sub(touch, args(scalars=(dom.window_base(0),)))

    with pytest.raises(RuntimeError, match=r"on sub-worker 0 failed: CHILD_DIED: .*signal 11"):
        w.run(orch)
    wait_windows_freed(w, (0,))
