"""Global communication domains (Orchestrator.allocate_global_domain): windows
on chips of different level-3 children of one level-4 Worker, shared between
their chip processes — a task on L3[1]'s chip reads L3[0]'s chip's window; an
all-reduce across the children equals NumPy's sum; every refusal names what was
wrong and changes nothing; leaving the domain while tasks naming it are in
flight lets them finish with the right bytes, then frees the windows."""

import ctypes
import os
import re
import signal
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, GlobalDomain, TaskKind, TensorArgType, Worker, all_reduce
from worker_helpers import Gate, args, closing, kernel_callable  # noqa: F401

F32 = DataType.FLOAT32
IN = TensorArgType.INPUT
OUT = TensorArgType.OUTPUT_EXISTING
N = 256  # float32 elements per buffer
NB = N * 4

# The chip callables the L3 orchestration `on_chip` runs, by index (filled before init: the children inherit it).
CHIP_HANDLES = []
# Handles of the other L3 orchestrations make() registers, by name.
L3_FNS = {}


def on_chip(o, a, _c):
    """In an L3 child: chip callable CHIP_HANDLES[scalar 0] on chip `scalar 1` with the task's tensors and the
    scalars after those two."""
    ta = args(
        *[(a[i], a.tag(i)) for i in range(a.tensor_count)], scalars=[a.scalar(k) for k in range(2, a.scalar_count)]
    )
    o.submit_next_level(CHIP_HANDLES[a.scalar(0)], ta, worker=a.scalar(1))


def try_on_chip(o, a, _c):
    """As on_chip, but to a sub-worker when `scalar 1` is 99; a refusal re-raised
    once it is clear it submitted nothing."""
    ta = args(*[(a[i], a.tag(i)) for i in range(a.tensor_count)])
    try:
        if a.scalar(1) == 99:
            o.submit_sub(CHIP_HANDLES[2], ta)
        else:
            o.submit_next_level(CHIP_HANDLES[a.scalar(0)], ta, worker=a.scalar(1))
    except ValueError:
        assert not o.submitted, "a refused submit recorded a task"
        raise


def global_stats(w4):
    s = w4.global_window_stats()
    return s["window_bytes_in_use"], s["live_windows"], s["live_domains"]


def wait_global_windows_freed(w4, bound_s=30.0):
    """A hang guard, not a timing claim: the release runs on the engine's thread once the tasks are done."""
    deadline = time.monotonic() + bound_s
    while global_stats(w4) != (0, 0, 0):
        assert time.monotonic() < deadline, global_stats(w4)
        time.sleep(0.01)


def make(closing, chips=(1, 1), sub_workers=0):
    w4 = Worker(level=4)
    for c in chips:
        w4.add_worker(Worker(level=3, num_chips=c, num_sub_workers=sub_workers))
    closing(w4)
    CHIP_HANDLES[:] = [w4.register(ChipCallable("std.copy")), w4.register(kernel_callable("test.gate"))]
    if sub_workers:
        CHIP_HANDLES.append(w4.register(lambda m: None, kind=TaskKind.SUB))
    fn = w4.register(on_chip)
    try_fn = w4.register(try_on_chip)
    L3_FNS["keep_or_reuse"] = w4.register(keep_or_reuse)
    w4.init()
    return w4, fn, try_fn


def copy_on(o, fn, l3, chip, src, dst):
    """From the L4: std.copy src -> dst on chip `chip` of L3 child `l3`."""
    return o.submit_next_level(fn, args((src, IN), (dst, OUT), scalars=(0, chip)), worker=l3)


def test_a_task_on_one_l3_child_reads_a_window_of_another(closing):
    w4, fn, _ = make(closing)
    src, dst = w4.create_buffer(NB), w4.create_buffer(NB)
    src.array((N,), F32)[...] = np.arange(N, dtype=np.float32) * 3 + 1
    dst.array((N,), F32)[...] = -1
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_global_domain(
            "g", members=[(0, 0), (1, 0)], window_size=2 * NB, buffers={"x": NB, "y": NB}
        ) as dom:
            seen["dom"] = repr(dom)
            seen["ranks"] = (dom.rank((0, 0)), dom.rank((1, 0)), dom.size, dom.members)
            x0 = dom.buffer("x", (0, 0)).tensor((N,), F32)
            y1 = dom.buffer("y", (1, 0)).tensor((N,), F32)
            copy_on(o, fn, 0, 0, src.tensor((N,), F32), x0)  # fill (0, 0)'s window from the host
            copy_on(o, fn, 1, 0, x0, y1)  # L3[1]'s chip reads its peer's window, writes its own
            copy_on(o, fn, 1, 0, y1, dst.tensor((N,), F32))  # back to the host
            seen["stats"] = global_stats(w4)

    w4.run(orch)
    assert seen["ranks"] == (0, 1, 2, ((0, 0), (1, 0)))
    assert seen["dom"].startswith("GlobalDomain('g', members [(0, 0), (1, 0)], window_size=2048")
    assert seen["stats"] == (2 * 4096, 2, 1)
    np.testing.assert_array_equal(dst.array((N,), F32), np.arange(N, dtype=np.float32) * 3 + 1)
    wait_global_windows_freed(w4)


def test_the_next_global_domain_on_a_released_window_reads_zeros_and_the_name_waits_for_the_windows(closing):
    w4, fn, _ = make(closing)
    secret, seen = w4.create_buffer(NB), w4.create_buffer(NB)
    secret.array((N,), F32)[...] = np.arange(1, N + 1, dtype=np.float32)
    seen.array((N,), F32)[...] = -1
    bases = {}

    def orch(o, _a, _c):
        members = [(0, 0), (1, 0)]
        with o.allocate_global_domain("g", members=members, window_size=NB, buffers={"x": NB}) as dom:
            bases["old"] = dom.window_base((1, 0))
            copy_on(o, fn, 1, 0, secret.tensor((N,), F32), dom.buffer("x", (1, 0)).tensor((N,), F32))
        # The same name at once: it waits until the old windows are zeroed and freed, then takes the same pages.
        with o.allocate_global_domain("g", members=members, window_size=NB, buffers={"x": NB}) as dom:
            bases["new"] = dom.window_base((1, 0))
            copy_on(o, fn, 1, 0, dom.buffer("x", (1, 0)).tensor((N,), F32), seen.tensor((N,), F32))

    w4.run(orch)
    assert bases["new"] == bases["old"], "the old windows were not freed before the name was taken again"
    np.testing.assert_array_equal(seen.array((N,), F32), np.zeros(N, dtype=np.float32))
    wait_global_windows_freed(w4)


# In an L3 child's process: a window tensor an orchestration kept past its run (scalar 0: 0 keeps a[0] and
# copies it to a[1] on chip 0; 1 copies the kept one to a[0] on chip 0).
KEPT = {}


def keep_or_reuse(o, a, _c):
    if a.scalar(0) == 0:
        KEPT["window"] = a[0]
        o.submit_next_level(CHIP_HANDLES[0], args((a[0], IN), (a[1], OUT)), worker=0)
    else:
        o.submit_next_level(CHIP_HANDLES[0], args((KEPT["window"], IN), (a[0], OUT)), worker=0)


def test_a_kept_descriptor_of_a_released_window_does_not_resolve_to_the_next_domain_on_its_pages(closing):
    """An L3 orchestration keeps a window's tensor past its domain's release; the next domain is carved on
    the same pages. The kept tensor's address is a live window of the chip again, so the L3's judge by
    address passes it; the chip, which imported it before and has not yet seen the new domain's buffer
    (whose identity would make the kept one an older generation), refuses it as released — before,
    its import cache resolved it to the new domain's window: every chip now forgets a released
    domain's buffers."""
    w4, _fn, _ = make(closing)
    keep = L3_FNS["keep_or_reuse"]
    seen = w4.create_buffer(NB)
    seen.array((N,), F32)[...] = -1
    bases = {}

    def first(o, _a, _c):
        with o.allocate_global_domain("old", members=[(1, 0)], window_size=NB, buffers={"x": NB}) as dom:
            bases["old"] = dom.window_base((1, 0))
            x = dom.buffer("x", (1, 0)).tensor((N,), F32)
            o.submit_next_level(keep, args((x, IN), (seen.tensor((N,), F32), OUT), scalars=(0,)), worker=1)

    def second(o, _a, _c):
        with o.allocate_global_domain("new", members=[(1, 0)], window_size=NB, buffers={"x": NB}) as dom:
            bases["new"] = dom.window_base((1, 0))
            o.submit_next_level(keep, args((seen.tensor((N,), F32), OUT), scalars=(1,)), worker=1)

    w4.run(first)
    wait_global_windows_freed(w4)
    with pytest.raises(RuntimeError) as info:
        w4.run(second)
    assert bases["new"] == bases["old"], "the next domain was carved elsewhere: the test proves nothing"
    msg = str(info.value)
    assert "argument refused on chip 0: stale descriptor" in msg and "was released" in msg, msg
    np.testing.assert_array_equal(seen.array((N,), F32), np.zeros(N, dtype=np.float32))  # the old window's zeros
    wait_global_windows_freed(w4)


def test_an_all_reduce_across_l3_children_equals_numpys_sum(closing):
    w4, fn, _ = make(closing)
    count = (1 << 20) // 4  # 1 MiB of FLOAT32
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(count).astype(np.float32) for _ in range(2)]
    hosts = [w4.create_buffer(count * 4) for _ in range(2)]
    for h, a in zip(hosts, inputs, strict=True):
        h.array((count,), F32)[...] = a
    members = [(0, 0), (1, 0)]

    def orch(o, _a, _c):
        with o.allocate_global_domain("dp", members=members, window_size=count * 4, buffers={"grad": count * 4}) as dom:
            assert isinstance(dom, GlobalDomain)
            views = [dom.buffer("grad", m).tensor((count,), F32) for m in members]
            for (l3, chip), h, v in zip(members, hosts, views, strict=True):
                copy_on(o, fn, l3, chip, h.tensor((count,), F32), v)
            all_reduce(o, dom, "grad", F32)
            for (l3, chip), h, v in zip(members, hosts, views, strict=True):
                copy_on(o, fn, l3, chip, v, h.tensor((count,), F32))

    w4.run(orch)
    expected = inputs[0] + inputs[1]
    for h in hosts:
        np.testing.assert_array_equal(h.array((count,), F32), expected)
    wait_global_windows_freed(w4)


def test_a_refused_global_domain_names_what_was_wrong_and_changes_nothing(closing):
    w4, _, _ = make(closing, chips=(1, 2))
    seen = {}
    cases = {
        "l3": ([(0, 0), (2, 0)], r"members\[1\]: l3=2 is not a child of L4 \(it has 2 local level-3 children\)"),
        "chip": ([(0, 0), (0, 1)], r"members\[1\]: chip=1 is not a chip of L3\[0\] \(it has 1 chips\)"),
        "dup": ([(1, 1), (0, 0), (1, 1)], r"member \(1, 1\) is listed twice \(members\[0\] and members\[2\]\)"),
        "empty": ([], "members must name at least one"),
        "pair": ([(0, 0, 0)], r"members\[0\]: expected an \(l3, chip\) pair"),
    }

    def orch(o, _a, _c):
        before = global_stats(w4)
        for key, (members, _) in cases.items():
            with pytest.raises((ValueError, TypeError)) as e:
                o.allocate_global_domain("g", members=members, window_size=4096)
            seen[key] = str(e.value)
        with o.allocate_global_domain("g", members=[(0, 0), (1, 1)], window_size=4096):
            with pytest.raises(ValueError) as taken:
                o.allocate_global_domain("g", members=[(1, 0)], window_size=4096)
            seen["taken"] = str(taken.value)
            with pytest.raises(ValueError) as fit:
                o.allocate_global_domain("h", members=[(1, 0)], window_size=64, buffers={"x": 128})
            seen["fit"] = str(fit.value)
        seen["after"] = (before, o.submitted)

    w4.run(orch)
    for key, (_, pattern) in cases.items():
        assert re.search(pattern, seen[key]), (key, seen[key])
    assert seen["taken"].startswith(
        "allocate_global_domain 'g': a domain of that name is live (members L3[0] chip 0, L3[1] chip 1)"
    )
    assert seen["fit"].startswith("allocate_global_domain 'h': the buffers do not fit in window_size 64 bytes")
    assert seen["after"] == ((0, 0, 0), [])
    wait_global_windows_freed(w4)

    w3 = Worker(level=3, num_chips=1)
    closing(w3)
    w3.init()
    with pytest.raises(
        ValueError,
        match=r"allocate_global_domain on L3 \(level 3\): the chips of a level-3 Worker "
        "share windows through allocate_domain",
    ):
        w3.run(lambda o, _a, _c: o.allocate_global_domain("g", members=[(0, 0)], window_size=4096))
    with pytest.raises(
        ValueError,
        match=r"Worker.global_window_stats: L3 is level 3; global windows belong to a "
        r"level-4 Worker \(allocate_global_domain\)",
    ):
        w3.global_window_stats()


def test_the_l3_admits_a_global_window_only_on_a_member_chip(closing, tmp_path):
    w4, fn, try_fn = make(closing, chips=(2, 1, 1), sub_workers=1)
    host = w4.create_buffer(NB)
    seen = {}

    def attempt(chip, l3=0, member=(0, 0)):
        def orch(o, _a, _c):
            with o.allocate_global_domain("g", members=[(0, 0), (1, 0)], window_size=4096, buffers={"x": NB}) as dom:
                x = dom.buffer("x", member).tensor((N,), F32)
                seen["dom"] = dom
                o.submit_next_level(try_fn, args((x, IN), (host.tensor((N,), F32), OUT), scalars=(0, chip)), worker=l3)

        return orch

    with pytest.raises(RuntimeError) as non_member:  # L3[0] chip 1 is not a member
        w4.run(attempt(1))
    assert (
        "window buffer" in str(non_member.value)
        and "of global domain 'g' may only be named by a task on a chip "
        "that is a member of its domain; chip 1 (L3[0] chip 1) is not a member"
        in str(non_member.value)
    )
    with pytest.raises(RuntimeError) as on_sub:  # a sub-worker of a member's L3
        w4.run(attempt(99, member=(1, 0)))
    assert (
        "of global domain 'g' may only be named by a task on a chip that is a member of its domain, not by a "
        "host sub-worker" in str(on_sub.value)
    )
    wait_global_windows_freed(w4)

    # The L4 sends a window only to a child that holds a member chip, and a released domain to none.
    def l4_side(o, _a, _c):
        with o.allocate_global_domain("g", members=[(0, 0), (1, 0)], window_size=4096, buffers={"x": NB}) as dom:
            x = dom.buffer("x", (1, 0)).tensor((N,), F32)
            with pytest.raises(ValueError) as e:
                copy_on(o, fn, 2, 0, x, host.tensor((N,), F32))
            seen["no_member"] = str(e.value)
        with pytest.raises(ValueError) as e:
            copy_on(o, fn, 1, 0, x, host.tensor((N,), F32))
        seen["released"] = str(e.value)
        seen["n"] = len(o.submitted)

    w4.run(l4_side)
    assert seen["n"] == 0
    assert (
        "window buffer 'x' of L3[1] chip 0 in domain 'g' (members L3[0] chip 0, L3[1] chip 0) may only go to a "
        "child that holds a member chip, not to worker 2"
    ) in seen["no_member"]
    assert "window buffer 'x' of L3[1] chip 0 in domain 'g'" in seen["released"]
    assert "was released" in seen["released"]
    wait_global_windows_freed(w4)


def test_leaving_the_domain_with_tasks_in_flight_keeps_their_bytes_then_frees(closing, tmp_path):
    w4, fn, _ = make(closing)
    src, out = w4.create_buffer(NB), w4.create_buffer(NB)
    src.array((N,), F32)[...] = np.arange(N, dtype=np.float32) * 2
    out.array((N,), F32)[...] = -1
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_global_domain("g", members=[(0, 0), (1, 0)], window_size=4096, buffers={"x": NB}) as dom:
            x0, x1 = dom.buffer("x", (0, 0)).tensor((N,), F32), dom.buffer("x", (1, 0)).tensor((N,), F32)
            g = Gate(w4, tmp_path, hold=x1)  # holds L3[1]'s chip back: its output is x1
            copy_on(o, fn, 0, 0, src.tensor((N,), F32), x0)
            o.submit_next_level(fn, args((g.path, IN), (x1, OUT), scalars=(1, 0, g.timeout_ms)), worker=1)
            copy_on(o, fn, 1, 0, x0, x1)  # after the gate (x1)
            copy_on(o, fn, 1, 0, x1, out.tensor((N,), F32))
        # released: refused at once, while the gate still holds its tasks
        seen["held"] = global_stats(w4)
        with pytest.raises(ValueError) as late:
            copy_on(o, fn, 0, 0, src.tensor((N,), F32), x0)
        seen["late"] = str(late.value)
        g.open()

    w4.run(orch)
    assert seen["held"] == (2 * 4096, 2, 1), "the windows went while tasks still named them"
    assert "window buffer 'x' of L3[0] chip 0 in domain 'g'" in seen["late"] and "was released" in seen["late"]
    np.testing.assert_array_equal(out.array((N,), F32), np.arange(N, dtype=np.float32) * 2)
    wait_global_windows_freed(w4)


def test_a_member_of_a_lost_l3_child_may_not_join(closing):
    w4, _, _ = make(closing)
    os.kill(w4.child_pids()[1], signal.SIGKILL)
    deadline = time.monotonic() + 10  # a hang guard
    while not w4.child_status()[1].lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w4.child_status()[1].lost, w4.child_status()
    seen = {}

    def orch(o, _a, _c):
        with pytest.raises(ValueError, match=r"allocate_global_domain 'g': L3\[1\] chip 0 is lost \(.*signal 9"):
            o.allocate_global_domain("g", members=[(0, 0), (1, 0)], window_size=4096)
        with o.allocate_global_domain("g", members=[(0, 0)], window_size=4096):
            seen["held"] = global_stats(w4)

    w4.run(orch)
    assert seen["held"] == (4096, 1, 1)
    wait_global_windows_freed(w4)


def _touch(mapped_args):
    """A sub task that reads one byte at the address its scalar names (a global window's)."""
    ctypes.c_uint8.from_address(mapped_args.scalars[0]).value  # noqa: B018


def touch_on_sub(o, a, _c):
    """In an L3 child: _touch on one of its sub-workers (CHIP_HANDLES[2])."""
    o.submit_sub(CHIP_HANDLES[2], args(scalars=(a.scalar(0),)))


def test_only_chips_reach_the_global_window_bytes(closing):
    w4 = Worker(level=4, num_sub_workers=1)
    w4.add_worker(Worker(level=3, num_chips=1, num_sub_workers=1))
    closing(w4)
    CHIP_HANDLES[:] = [None, None, w4.register(_touch, kind=TaskKind.SUB)]
    fn = w4.register(touch_on_sub)
    w4.init()

    def from_l3(o, _a, _c):
        with o.allocate_global_domain("g", members=[(0, 0)], window_size=4096) as dom:
            o.submit_next_level(fn, args(scalars=(dom.window_base((0, 0)),)), worker=0)

    with pytest.raises(RuntimeError, match=r"L4 → L3\[0\] → sub-worker 0: .*signal 11"):
        w4.run(from_l3)

    def from_l4(o, _a, _c):
        with o.allocate_global_domain("g", members=[(0, 0)], window_size=4096) as dom:
            o.submit_sub(CHIP_HANDLES[2], args(scalars=(dom.window_base((0, 0)),)))

    with pytest.raises(RuntimeError, match=r"on sub-worker 0 failed: CHILD_DIED: .*signal 11"):
        w4.run(from_l4)
    wait_global_windows_freed(w4)
