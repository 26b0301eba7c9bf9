"""The Worker with simulated chips, end to end: a chip task on host arguments
(staged, zero-copy per task, zero-copy per Worker) computes the right bytes;
strided views work as INPUT and as OUTPUT_EXISTING and leave every element
outside the view untouched; DEVICE arguments reach their chip through
alloc_child_tensor + copy_to / copy_from; a group spans two chips; a scope
releases its device memory and a later submit naming it is refused; disjoint
slices of one buffer written on two chips run at the same time (and dependent
tasks do not); two tasks that rendezvous over disjoint slices do not deadlock;
a chip result feeds a sub-worker holding a READ grant."""

import time

import numpy as np
import pytest

from simpler import (
    AccessMode,
    CallConfig,
    ChipCallable,
    DataType,
    TensorArgType,
    Worker,
    view_array,
)
from worker_helpers import (  # noqa: F401
    args,
    close_and_check,
    closing,
    kernel_callable,
    meet_partner,
    rendezvous_dir,
    time_bound,
)

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32, I32, I64 = DataType.FLOAT32, DataType.INT32, DataType.INT64
MODES = ["staged", "task_zero_copy", "worker_zero_copy"]


def make_worker(mode="staged", **kw):
    kw.setdefault("task_timeout", 30)
    return Worker(level=3, zero_copy=(mode == "worker_zero_copy"), **kw)


def cfg_for(mode):
    return CallConfig(zero_copy=True) if mode == "task_zero_copy" else None


def host(buf, shape, dtype=F32, **kw):
    return view_array(buf.tensor(shape, dtype, **kw))


@pytest.mark.parametrize("mode", MODES)
def test_vector_add_on_host_arguments(mode, closing):
    w = make_worker(mode, num_chips=1)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    M, N = 24, 16
    a, b, c = (w.create_buffer(M * N * 4) for _ in range(3))
    host(a, (M, N))[...] = np.arange(M * N, dtype=np.float32).reshape(M, N)
    host(b, (M, N))[...] = 0.5
    host(c, (M, N))[...] = -1

    w.run(
        lambda o, _a, _c: o.submit_next_level(
            vadd,
            args((a.tensor((M, N), F32), IN), (b.tensor((M, N), F32), IN), (c.tensor((M, N), F32), OUT)),
            cfg_for(mode),
            worker=0,
        )
    )
    np.testing.assert_array_equal(host(c, (M, N)), np.arange(M * N, dtype=np.float32).reshape(M, N) + 0.5)


# std.matmul's layouts (docs/internals/chip.md): (shape, strides, byte_offset) of A [M, K], B [K, N] and C [M, N]
# over 64 x 64 buffers. The first four go to the BLAS's sgemm where one is loaded, the last two take the loop;
# with SIMPLER_BLAS=none every one takes the loop.
M_, K_, N_, W_ = 12, 20, 9, 64
MATMUL_LAYOUTS = {
    "dense": ((None, 0), (None, 0), (None, 0)),
    "transposed_a_and_b": (((1, M_), 0), ((1, K_), 0), (None, 0)),
    "row_strides_past_the_width": (((K_ + 3, 1), 0), ((W_, 1), 0), ((N_ + 5, 1), 0)),
    "sub_regions": (((W_, 1), (3 * W_ + 5) * 4), ((W_, 1), (7 * W_ + 1) * 4), ((W_, 1), (30 * W_ + 40) * 4)),
    "non_unit_inner_stride": (((2 * K_, 2), 0), (None, 0), (None, 0)),
    "transposed_c": ((None, 0), (None, 0), ((1, M_), 0)),
}


@pytest.mark.parametrize("layout", MATMUL_LAYOUTS)
@pytest.mark.parametrize("mode", ["staged", "worker_zero_copy"])
@pytest.mark.parametrize("blas", ["loaded", "none"])
def test_std_matmul_of_every_layout_agrees_with_numpy(layout, mode, blas, closing, monkeypatch):
    if blas == "none":
        monkeypatch.setenv("SIMPLER_BLAS", "none")  # read by the chip process, forked at init()
    w = make_worker(mode, num_chips=1)
    closing(w)
    mm = w.register(ChipCallable("std.matmul"))
    w.init()
    rng = np.random.default_rng(7)
    bufs = [w.create_buffer(W_ * W_ * 4) for _ in range(3)]
    for buf in bufs:
        host(buf, (W_ * W_,))[...] = rng.standard_normal(W_ * W_, dtype=np.float32)
    before = host(bufs[2], (W_ * W_,)).copy()
    views = [
        (buf, shape, strides, off)
        for buf, shape, (strides, off) in zip(bufs, ((M_, K_), (K_, N_), (M_, N_)), MATMUL_LAYOUTS[layout], strict=True)
    ]
    a, b, c = (host(buf, shape, strides=strides, byte_offset=off) for buf, shape, strides, off in views)
    expect = a.astype(np.float64) @ b.astype(np.float64)
    w.run(
        lambda o, _a, _c: o.submit_next_level(
            mm,
            args(
                *(
                    (buf.tensor(shape, F32, strides, off), tag)
                    for (buf, shape, strides, off), tag in zip(views, (IN, IN, OUT), strict=True)
                )
            ),
            worker=0,
        )
    )
    np.testing.assert_allclose(c, expect, rtol=1e-4, atol=1e-4)
    c_strides, c_off = MATMUL_LAYOUTS[layout][2]
    s0, s1 = c_strides or (N_, 1)
    outside = np.ones(W_ * W_, dtype=bool)
    outside[c_off // 4 + np.arange(M_)[:, None] * s0 + np.arange(N_)[None, :] * s1] = False
    np.testing.assert_array_equal(host(bufs[2], (W_ * W_,))[outside], before[outside])


@pytest.mark.parametrize("mode", MODES)
def test_strided_views_as_input_and_as_output_leave_the_rest_untouched(mode, closing):
    w = make_worker(mode, num_chips=1)
    closing(w)
    copy = w.register(ChipCallable("std.copy"))
    add_scalar = w.register(ChipCallable("std.add_scalar"))
    w.init()
    M, N = 8, 12
    src = w.create_buffer(M * N * 4)
    dst = w.create_buffer(N * 2 * M * 4)
    dst2 = w.create_buffer(M * N * 4)
    A = np.arange(M * N, dtype=np.float32).reshape(M, N)
    host(src, (M, N))[...] = A
    host(dst, (N, 2 * M))[...] = -1
    host(dst2, (M, N))[...] = -7
    # INPUT: src transposed (N, M); OUTPUT_EXISTING: columns M..2M of dst (N, 2M).
    src_t = src.tensor((N, M), F32, strides=(1, N))
    dst_cols = dst.tensor((N, M), F32, strides=(2 * M, 1), byte_offset=M * 4)
    # INPUT: columns 2..6 of src, transposed; OUTPUT_EXISTING: a transposed (4, M) view of dst2's first 4 columns.
    src_cols = src.tensor((4, M), F32, strides=(1, N), byte_offset=2 * 4)
    dst2_t = dst2.tensor((4, M), F32, strides=(1, N))
    scalar = int(np.float32(100).view(np.uint32))

    def orch(o, _a, _c):
        o.submit_next_level(copy, args((src_t, IN), (dst_cols, OUT)), cfg_for(mode), worker=0)
        o.submit_next_level(add_scalar, args((src_cols, IN), (dst2_t, OUT), scalars=(scalar,)), cfg_for(mode), worker=0)

    w.run(orch)
    expected = np.full((N, 2 * M), -1, dtype=np.float32)
    expected[:, M:] = A.T
    np.testing.assert_array_equal(host(dst, (N, 2 * M)), expected)
    expected2 = np.full((M, N), -7, dtype=np.float32)
    expected2[:, :4] = A[:, 2:6] + 100  # dst2_t[j, i] = dst2[i, j] = src[i, 2 + j] + 100
    np.testing.assert_array_equal(host(dst2, (M, N)), expected2)
    np.testing.assert_array_equal(host(src, (M, N)), A)  # an INPUT is never written back


@pytest.mark.parametrize("mode", MODES)
def test_device_arguments_via_alloc_child_tensor_copy_to_and_copy_from(mode, closing):
    w = make_worker(mode, num_chips=2)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    M, N = 16, 8
    a = w.alloc_shared_tensor((M, N), F32)
    b = w.create_buffer(M * N * 4)
    out = w.alloc_shared_tensor((M, N), F32)
    a.array()[...] = np.arange(M * N, dtype=np.float32).reshape(M, N)
    host(b, (M, N))[...] = 3
    out.array()[...] = 0
    seen = {}

    def orch(o, _a, _c):
        d_a = o.alloc_child_tensor(1, (M, N), F32)
        d_c = o.alloc_child_tensor(1, (M, N), F32)
        seen["chip"], seen["base"] = d_a.chip, d_a.base
        seen["live"] = w._state.core.device_stats(1)["live_allocations"]
        o.copy_to(d_a.tensor(), a.tensor())
        # one task mixing a DEVICE input, a HOST input and a DEVICE output
        o.submit_next_level(
            vadd, args((d_a.tensor(), IN), (b.tensor((M, N), F32), IN), (d_c.tensor(), OUT)), cfg_for(mode), worker=1
        )
        o.copy_from(out.tensor(), d_c.tensor())

    w.run(orch)
    assert seen["chip"] == 1 and seen["base"] != 0 and seen["live"] == 2
    np.testing.assert_array_equal(out.array(), np.arange(M * N, dtype=np.float32).reshape(M, N) + 3)
    assert w._state.core.device_stats(1)["live_allocations"] == 0, "the run's device memory outlived it"
    assert w._state.core.device_stats(0)["live_allocations"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_transposed_view_of_device_memory(mode, closing):
    w = make_worker(mode, num_chips=1)
    closing(w)
    w.init()
    M, N = 6, 10
    src = w.alloc_shared_tensor((N, M), F32)
    back = w.alloc_shared_tensor((M, N), F32)
    S = np.arange(N * M, dtype=np.float32).reshape(N, M)
    src.array()[...] = S
    back.array()[...] = -1

    def orch(o, _a, _c):
        d = o.alloc_child_tensor(0, (M, N), F32)
        # d = S.T, written through a transposed view
        o.copy_to(d.tensor((N, M), strides=(1, N)), src.tensor(), cfg_for(mode))
        o.copy_from(back.tensor(), d.tensor(), cfg_for(mode))

    w.run(orch)
    np.testing.assert_array_equal(back.array(), S.T)


def test_a_device_allocation_outside_any_scope_lives_until_release(closing):
    w = make_worker(num_chips=1)
    closing(w)
    add_scalar = w.register(ChipCallable("std.add_scalar"))
    w.init()
    n = 64
    h = w.alloc_shared_tensor((n,), F32)
    h.array()[...] = 1
    kept = {}

    def first(o, _a, _c):
        kept["d"] = d = o.alloc_child_tensor(0, (n,), F32, scoped=False)
        o.copy_to(d.tensor(), h.tensor())

    def second(o, _a, _c):
        d = kept["d"]
        o.submit_next_level(
            add_scalar, args((d.tensor(), IN), (d.tensor(), OUT), scalars=(int(np.float32(2).view(np.uint32)),))
        )

    w.run(first)
    assert w._state.core.device_stats(0)["live_allocations"] == 1
    with pytest.raises(ValueError, match="overlap"):  # in and out over the same bytes of one task
        w.run(second)

    def second_ok(o, _a, _c):
        d = kept["d"]
        tmp = o.alloc_child_tensor(0, (n,), F32)
        o.submit_next_level(
            add_scalar, args((d.tensor(), IN), (tmp.tensor(), OUT), scalars=(int(np.float32(2).view(np.uint32)),))
        )
        o.copy_from(h.tensor(), tmp.tensor())

    w.run(second_ok)
    np.testing.assert_array_equal(h.array(), np.full(n, 3, np.float32))
    kept["d"].release()
    w.run(lambda o, a, c: None)  # the release completes once earlier tasks are done
    assert w._state.core.device_stats(0)["live_allocations"] == 0


@pytest.mark.parametrize("mode", ["staged", "task_zero_copy"])
def test_a_group_spans_two_chips_and_its_successor_sees_both_members(mode, closing):
    w = make_worker(mode, num_chips=2)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    add_scalar = w.register(ChipCallable("std.add_scalar"))
    w.init()
    M, N = 16, 8
    a, b, c, d = (w.create_buffer(M * N * 4) for _ in range(4))
    host(a, (M, N))[...] = np.arange(M * N, dtype=np.float32).reshape(M, N)
    host(b, (M, N))[...] = 10
    host(c, (M, N))[...] = -1
    half = M // 2 * N * 4

    def rows(buf, i):
        return buf.tensor((M // 2, N), F32, byte_offset=i * half)

    def orch(o, _a, _c):
        o.submit_next_level_group(
            vadd,
            [args((rows(a, i), IN), (rows(b, i), IN), (rows(c, i), OUT)) for i in range(2)],
            cfg_for(mode),
            workers=[1, 0],
        )
        # reads all of c: depends on both members
        o.submit_next_level(
            add_scalar,
            args(
                (c.tensor((M, N), F32), IN), (d.tensor((M, N), F32), OUT), scalars=(int(np.float32(1).view(np.uint32)),)
            ),
            cfg_for(mode),
            worker=0,
        )

    w.run(orch)
    want = np.arange(M * N, dtype=np.float32).reshape(M, N) + 10
    np.testing.assert_array_equal(host(c, (M, N)), want)
    np.testing.assert_array_equal(host(d, (M, N)), want + 1)


def test_a_scope_releases_its_device_memory_and_later_submits_naming_it_are_refused(closing):
    w = make_worker(num_chips=1)
    closing(w)
    w.init()
    n = 256
    h = w.alloc_shared_tensor((n,), F32)
    back = w.alloc_shared_tensor((n,), F32)
    h.array()[...] = np.arange(n, dtype=np.float32)
    back.array()[...] = 0
    seen = {}

    def orch(o, _a, _c):
        with o.scope():
            d = o.alloc_child_tensor(0, (n,), F32)
            o.copy_to(d.tensor(), h.tensor())
            o.copy_from(back.tensor(), d.tensor())
            seen["inside"] = w._state.core.device_stats(0)["live_allocations"]
        seen["released"] = d.released
        o.copy_from(back.tensor(), d.tensor())  # after the scope: refused

    with pytest.raises(ValueError) as info:
        w.run(orch)
    msg = str(info.value)
    assert "was released (its scope ended or it was freed); a task may not name it any more" in msg, msg
    assert seen == {"inside": 1, "released": True}
    np.testing.assert_array_equal(back.array(), np.arange(n, dtype=np.float32))  # the in-scope tasks ran
    assert w._state.core.device_stats(0)["live_allocations"] == 0
    # the Worker stays usable
    w.run(lambda o, a, c: o.copy_to(o.alloc_child_tensor(0, (n,), F32).tensor(), h.tensor()))
    assert w._state.core.device_stats(0)["live_allocations"] == 0


STAMP_MS = 500


@pytest.mark.parametrize("freed", [False, True], ids=["releasing", "freed"])
@pytest.mark.parametrize("how", ["copy_from", "submit", "group"])
def test_naming_released_device_memory_is_refused_with_the_reason_whether_or_not_it_is_freed_yet(how, freed, closing):
    """While the block's earlier tasks run it is 'releasing' (the engine refuses
    it); once they have finished it is freed and unknown to the engine: the
    refusal still says it was released."""
    w = make_worker(num_chips=1)
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    copy = w.register(ChipCallable("std.copy"))
    w.init()
    host_out = w.create_buffer(16)

    def orch(o, _a, _c):
        with o.scope():
            d = o.alloc_child_tensor(0, (2,), I64)
            o.submit_next_level(stamp, args((d.tensor(), OUT), scalars=(0 if freed else 400,)), worker=0)
        if freed:
            deadline = time.monotonic() + 10
            while w._state.core.device_stats(0)["live_allocations"] and time.monotonic() < deadline:
                time.sleep(0.005)
            assert w._state.core.device_stats(0)["live_allocations"] == 0
        else:
            assert w._state.core.device_stats(0)["live_allocations"] == 1
        t = args((d.tensor(), IN), (host_out.tensor((2,), I64), OUT))
        if how == "copy_from":
            o.copy_from(host_out.tensor((2,), I64), d.tensor())
        elif how == "submit":
            o.submit_next_level(copy, t, worker=0)
        else:
            o.submit_next_level_group(copy, [t], workers=[0])

    with pytest.raises(
        ValueError,
        match=r"of chip 0 was released \(its scope ended or it was freed\); a task may "
        "not name it any more",
    ):
        w.run(orch)


def test_a_scope_frees_its_device_memory_only_after_the_tasks_using_it_finish(closing):
    w = make_worker(num_chips=1)
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    out = w.create_buffer(16)
    view_array(out.tensor((2,), I64))[...] = 0
    live = []

    def orch(o, _a, _c):
        with o.scope():
            outer = o.alloc_child_tensor(0, (2,), I64)
            with o.scope():
                inner = o.alloc_child_tensor(0, (2,), I64)
                o.submit_next_level(stamp, args((inner.tensor(), OUT), scalars=(400,)), worker=0)
            live.append(w._state.core.device_stats(0)["live_allocations"])  # inner is releasing, its task still runs
            assert inner.released and not outer.released
            o.submit_next_level(stamp, args((outer.tensor(), OUT), scalars=(0,)), worker=0)
            o.copy_from(out.tensor((2,), I64), outer.tensor())
        live.append(w._state.core.device_stats(0)["live_allocations"])

    w.run(orch)
    assert live[0] == 2, "a scope freed device memory a running task still uses"
    assert w._state.core.device_stats(0)["live_allocations"] == 0
    s, e = view_array(out.tensor((2,), I64))
    assert 0 < s <= e


def stamps(buf, slot):
    return view_array(buf.tensor((2,), I64, byte_offset=slot * 16))


@pytest.mark.parametrize("mode", ["staged", "task_zero_copy"])
def test_disjoint_slices_written_on_two_chips_run_concurrently(mode, closing):
    w = make_worker(mode, num_chips=2)
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    buf = w.create_buffer(3 * 16)  # slots 0 and 2 are written; slot 1 between them must stay untouched
    view_array(buf.tensor((6,), I64))[...] = -5

    def orch(o, _a, _c):
        o.submit_next_level(stamp, args((buf.tensor((2,), I64), OUT), scalars=(STAMP_MS,)), cfg_for(mode), worker=0)
        o.submit_next_level(
            stamp, args((buf.tensor((2,), I64, byte_offset=32), OUT), scalars=(STAMP_MS,)), cfg_for(mode), worker=1
        )

    t0 = time.monotonic_ns()
    w.run(orch)
    t1 = time.monotonic_ns()
    (s0, e0), (s1, e1) = stamps(buf, 0), stamps(buf, 2)
    for s, e in ((s0, e0), (s1, e1)):
        assert t0 <= s and e <= t1 and e - s >= STAMP_MS * 1_000_000, "a stamp is not from this run"
    assert s1 < e0 and s0 < e1, f"disjoint slices on two chips did not overlap: [{s0},{e0}] [{s1},{e1}]"
    assert (stamps(buf, 1) == -5).all(), "bytes between the slices were written"


def test_dependent_tasks_on_two_chips_do_not_overlap(closing):
    w = make_worker(num_chips=2)
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    buf = w.create_buffer(2 * 16)
    x, y = buf.tensor((2,), I64), buf.tensor((2,), I64, byte_offset=16)

    def orch(o, _a, _c):
        o.submit_next_level(stamp, args((x, OUT), scalars=(100,)), worker=0)
        o.submit_next_level(stamp, args((x, IN), (y, OUT), scalars=(100,)), worker=1)  # reads x: RAW

    w.run(orch)
    (s0, e0), (s1, e1) = stamps(buf, 0), stamps(buf, 1)
    assert s0 < e0 <= s1 < e1, f"a dependent task started before its producer ended: [{s0},{e0}] [{s1},{e1}]"


@pytest.mark.parametrize("mode", ["staged", "task_zero_copy"])
def test_two_tasks_that_rendezvous_over_interleaved_column_slices_do_not_deadlock(mode, tmp_path, closing):
    """x[:, 0:4] and x[:, 8:12]: bounding boxes interleave, the views do not. A
    spurious edge would hold one task back while the other waits for it; each
    task gives up after 10 s, so a deadlock fails the test instead of hanging it."""
    w = make_worker(mode, num_chips=2)
    closing(w)
    rdv = w.register(kernel_callable("test.rendezvous"))
    w.init()
    M, N = 8, 16
    x = w.create_buffer(M * N * 4)
    host(x, (M, N), I32)[...] = 0
    path = rendezvous_dir(w, tmp_path)

    def orch(o, _a, _c):
        for me, col in ((0, 0), (1, 8)):
            view = x.tensor((M, 4), I32, strides=(N, 1), byte_offset=col * 4)
            o.submit_next_level(rdv, args((path, IN), (view, OUT), scalars=(me, 10_000)), cfg_for(mode), worker=me)

    t0 = time.monotonic()
    w.run(orch)
    assert time.monotonic() - t0 < 10
    want = np.zeros((M, N), np.int32)
    want[:, 0:4], want[:, 8:12] = 1, 2
    np.testing.assert_array_equal(host(x, (M, N), I32), want)


def meet(a):
    """The sub-worker twin of test.rendezvous: scalar 0 is this task's id."""
    me = a.scalars[0]
    meet_partner(a.array(0), me)
    a.array(1)[...] = me + 1


def test_two_sub_tasks_that_rendezvous_over_interleaved_column_slices_do_not_deadlock(tmp_path, closing):
    w = make_worker(num_sub_workers=2)
    closing(w)
    h = w.register(meet)
    w.init()
    M, N = 8, 16
    x = w.create_buffer(M * N * 4)
    host(x, (M, N), I32)[...] = 0
    path = rendezvous_dir(w, tmp_path)

    def orch(o, _a, _c):
        for me, col in ((0, 0), (1, 8)):
            o.submit_sub(
                h, args((path, IN), (x.tensor((M, 4), I32, strides=(N, 1), byte_offset=col * 4), OUT), scalars=(me,))
            )

    w.run(orch)
    want = np.zeros((M, N), np.int32)
    want[:, 0:4], want[:, 8:12] = 1, 2
    np.testing.assert_array_equal(host(x, (M, N), I32), want)


def total(a):
    """out[0] = sum of both inputs; out[1] = 1 when writing the READ grant is refused."""
    granted = a.array(0)
    a.array(2)[0] = granted.sum() + a.array(1).sum()
    try:
        granted[0] = 0
    except ValueError:
        a.array(2)[1] = 1
    else:
        a.array(2)[1] = -1


def test_a_chip_result_feeds_a_sub_worker_and_a_read_grant_stays_read_only(closing):
    w = make_worker(num_chips=1, num_sub_workers=1)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    summ = w.register(total)
    w.init()
    n = 32
    a = w.create_buffer(n * 4, access=AccessMode.READ)  # the grant every consumer gets: READ
    a.shm.buf[:] = np.arange(n, dtype=np.float32).tobytes()  # the owner fills it before run()
    c = w.create_buffer(n * 4)
    r = w.create_buffer(2 * 4)

    def orch(o, _a, _c):
        o.submit_next_level(
            vadd, args((a.tensor((n,), F32), IN), (a.tensor((n,), F32), IN), (c.tensor((n,), F32), OUT)), worker=0
        )
        o.submit_sub(summ, args((a.tensor((n,), F32), IN), (c.tensor((n,), F32), IN), (r.tensor((2,), F32), OUT)))

    w.run(orch)
    assert host(r, (2,)).tolist() == [3 * sum(range(n)), 1]
    np.testing.assert_array_equal(host(a, (n,)), np.arange(n, dtype=np.float32))
