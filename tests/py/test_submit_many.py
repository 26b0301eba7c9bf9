"""Orchestrator.submit_many / submit_sub_many and TaskArgsBatch.tiled: a batch
gives the same edges as the same tasks submitted one at a time; the bytes are
right end to end on chips and on sub-workers; tiles are the views they should
be (ragged edges, broadcast operands); a refusal names the task's index and
submits none of the batch; a batch works inside Worker.submit runs."""

import os
import time

import numpy as np
import pytest

from simpler import (
    ChipCallable,
    DataType,
    MappedArgs,
    TaskArgsBatch,
    Tensor,
    TensorArgType,
    Worker,
    view_array,
)
from worker_helpers import args, closing  # noqa: F401

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT
F32 = DataType.FLOAT32


def add_one(a: MappedArgs) -> None:
    a.array(1)[...] = a.array(0) + 1


def noop(_a: MappedArgs) -> None:
    return None


def wait_for_file(a: MappedArgs) -> None:
    path = bytes(a.array(0)).rstrip(b"\0").decode()
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.001)


def test_tiled_builds_the_tile_views_with_ragged_edges_and_broadcast_operands(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    w.init()
    a, b = w.create_buffer(10 * 6 * 4), w.create_buffer(64)
    ta, tb = a.tensor((10, 6), F32), b.tensor((16,), F32)
    batch = TaskArgsBatch.tiled([(ta, IN, (4, 4)), (tb, INOUT, None)])
    assert len(batch) == 3 * 2
    shapes = [tuple(batch[k][0].shapes) for k in range(len(batch))]
    assert shapes == [(4, 4), (4, 2), (4, 4), (4, 2), (2, 4), (2, 2)]
    offsets = [batch[k][0].byte_offset for k in range(len(batch))]
    assert offsets == [4 * (r * 6 + c) for r in (0, 4, 8) for c in (0, 4)]
    assert all(tuple(batch[k][0].strides) == (6, 1) for k in range(len(batch)))
    assert all(batch[k][1] == tb and batch[k].tags == [IN, INOUT] for k in range(len(batch)))
    assert batch[-1][0].shapes == batch[5][0].shapes
    with pytest.raises(IndexError):
        batch[6]


def test_tiled_refuses_with_the_operand_named(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    w.init()
    t = w.create_buffer(64).tensor((16,), F32)
    u = w.create_buffer(64).tensor((4, 4), F32)
    with pytest.raises(ValueError, match="operand 1's grid"):
        TaskArgsBatch.tiled([(t, IN, (4,)), (t, IN, (8,))])
    with pytest.raises(ValueError, match=r"operand 0: tile .* has a zero extent"):
        TaskArgsBatch.tiled([(t, IN, (0,))])
    with pytest.raises(ValueError, match=r"operand 0: tile .* 2 dimension"):
        TaskArgsBatch.tiled([(t, IN, (4, 4))])
    with pytest.raises(ValueError, match="no operand is tiled"):
        TaskArgsBatch.tiled([(u, IN, None)])
    with pytest.raises(ValueError, match="no operands"):
        TaskArgsBatch.tiled([])


def _chain_batch(buf, n):
    """n tasks over 3 overlapping windows of one buffer: some depend on others."""
    out = []
    for i in range(n):
        out.append(args((buf.tensor((8,), F32, byte_offset=4 * (i % 3) * 4), INOUT if i % 2 else IN)))
    return out


def _edges_of(how, form, release, closing):
    """The edge log of a gate task then 12 tasks, submitted one at a time or as a batch."""
    w = Worker(level=3, num_sub_workers=1, record_edges=True)
    closing(w)
    h, gate = w.register(noop), w.register(wait_for_file)
    w.init()
    buf, name = w.create_buffer(256), w.create_buffer(256)
    path = np.frombuffer(str(release).encode(), np.uint8)
    view_array(name.tensor((256,), DataType.UINT8))[...] = 0
    view_array(name.tensor((256,), DataType.UINT8))[: len(path)] = path
    tasks = _chain_batch(buf, 12)

    def orch(o, _a, _c):
        o.submit_sub(gate, args((name.tensor((256,), DataType.UINT8), IN), (buf.tensor((64,), F32), OUT)))
        if how == "one":
            handles = [o.submit_sub(h, t) for t in tasks]
        else:
            batch = tasks
            if form == "batch":
                batch = TaskArgsBatch()
                for t in tasks:
                    batch.append(t)
            handles = o.submit_sub_many(h, batch)
        assert handles == o.submitted[1:]
        release.touch()

    w.run(orch)
    return [(e.predecessor, e.successor, e.kind, e.predecessor_arg, e.successor_arg) for e in w.take_edge_log()]


@pytest.mark.parametrize("form", ["list", "batch"])
def test_a_batch_infers_the_same_edges_as_one_at_a_time_submits(form, tmp_path, closing):
    # One sub-worker held by a first task that writes the whole buffer: nothing
    # finishes while the tasks are submitted, so every edge is inferred.
    one = _edges_of("one", form, tmp_path / "go-one", closing)
    many = _edges_of("many", form, tmp_path / "go-many", closing)
    assert one == many and len(one) > 12


def test_right_bytes_on_sub_workers_through_a_tiled_batch(closing):
    w = Worker(level=3, num_sub_workers=2)
    closing(w)
    h = w.register(add_one)
    w.init()
    n, tile = 1000, 10
    x, y = w.create_buffer(n * 4), w.create_buffer(n * 4)
    view_array(x.tensor((n,), F32))[...] = np.arange(n, dtype=np.float32)
    batch = TaskArgsBatch.tiled([(x.tensor((n,), F32), IN, (tile,)), (y.tensor((n,), F32), OUT, (tile,))])
    w.run(lambda o, _a, _c: o.submit_sub_many(h, batch))
    np.testing.assert_array_equal(view_array(y.tensor((n,), F32)), np.arange(n, dtype=np.float32) + 1)


@pytest.mark.parametrize("workers", [None, 1, "each"])
def test_right_bytes_on_chips_with_workers_for_all_or_each(workers, closing):
    w = Worker(level=3, num_chips=2, task_timeout=30)
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    rows, cols = 12, 16
    a, b, c = (w.create_buffer(rows * cols * 4) for _ in range(3))
    view_array(a.tensor((rows, cols), F32))[...] = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    view_array(b.tensor((rows, cols), F32))[...] = 0.5
    batch = TaskArgsBatch.tiled([(t.tensor((rows, cols), F32), tag, (4, 8)) for t, tag in ((a, IN), (b, IN), (c, OUT))])
    chosen = [k % 2 for k in range(len(batch))] if workers == "each" else workers
    got = []
    w.run(lambda o, _a, _c: got.extend(o.submit_many(vadd, batch, workers=chosen)))
    assert len(got) == 6 and [t.id for t in got] == sorted(t.id for t in got)
    expect = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) + 0.5
    np.testing.assert_array_equal(view_array(c.tensor((rows, cols), F32)), expect)


def test_a_refusal_names_the_index_and_submits_none_of_the_batch(closing):
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    closing(w)
    h = w.register(noop)
    vadd = w.register(ChipCallable("std.vector_add"))
    w.init()
    a, b, c = (w.create_buffer(16) for _ in range(3))
    good = args((a.tensor((4,), F32), IN), (b.tensor((4,), F32), IN), (c.tensor((4,), F32), OUT))
    seen = {}

    def orch(o, _a, _c):
        with pytest.raises(
            ValueError,
            match=r"submit_many: task 2 of the batch refused \(none of its 4 tasks was "
            r"submitted\): submit of task 3 refused: .*worker=5",
        ):
            o.submit_many(vadd, [good, good, good, good], workers=[0, 0, 5, 0])
        seen["after_worker"] = len(o.submitted)
        with pytest.raises(TypeError, match=r"args_list\[1\]"):
            o.submit_sub_many(h, [good, "not args"])
        with pytest.raises(ValueError, match="3 argument lists but 2 workers"):
            o.submit_many(vadd, [good, good, good], workers=[0, 0])
        with pytest.raises(ValueError, match="worker=-1"):
            o.submit_many(vadd, [good], workers=-1)
        seen["end"] = len(o.submitted)
        overlap = args(
            (a.tensor((4,), F32), OUT), (a.tensor((2,), F32, byte_offset=4), INOUT), (c.tensor((4,), F32), OUT)
        )
        with pytest.raises(ValueError, match=r"task 1 of the batch refused .*task 2 refused"):
            o.submit_many(vadd, [good, overlap])
        seen["overlap"] = len(o.submitted)
        seen["next"] = o.submit_many(vadd, [good])[0].id

    w.run(orch)
    assert seen == {"after_worker": 0, "end": 0, "overlap": 0, "next": 1}


def test_a_tiled_batch_then_appended_tasks_run_in_order_and_a_refusal_names_the_index(closing):
    # The tiling's tasks are built when read or submitted; appended TaskArgs follow them.
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    h = w.register(add_one)
    w.init()
    n = 32
    x, y, z = w.create_buffer(n * 4), w.create_buffer(n * 4), w.create_buffer(16)
    view_array(x.tensor((n,), F32))[...] = np.arange(n, dtype=np.float32)
    batch = TaskArgsBatch.tiled([(x.tensor((n,), F32), IN, (8,)), (y.tensor((n,), F32), OUT, (8,))])
    # The last task reads what the tiling's last task wrote: an edge into the appended task.
    batch.append(args((y.tensor((4,), F32, byte_offset=(n - 4) * 4), IN), (z.tensor((4,), F32), OUT)))
    assert len(batch) == 5 and repr(batch) == "TaskArgsBatch(5 tasks)"
    assert batch[3][0].byte_offset == 24 * 4 and batch[-1][1] == z.tensor((4,), F32)
    w.run(lambda o, _a, _c: o.submit_sub_many(h, batch))
    np.testing.assert_array_equal(view_array(y.tensor((n,), F32)), np.arange(n, dtype=np.float32) + 1)
    np.testing.assert_array_equal(view_array(z.tensor((4,), F32)), np.arange(n - 4, n, dtype=np.float32) + 2)
    overlapping = args((z.tensor((4,), F32), OUT), (z.tensor((2,), F32, byte_offset=4), INOUT))
    batch.append(overlapping)

    def orch(o, _a, _c):
        with pytest.raises(ValueError, match=r"task 5 of the batch refused \(none of its 6 tasks was submitted\)"):
            o.submit_sub_many(h, batch)
        assert len(o.submitted) == 0

    w.run(orch)


def test_an_empty_batch_submits_nothing_and_a_batch_works_inside_submit_runs(closing):
    w = Worker(level=3, num_sub_workers=2)
    closing(w)
    h = w.register(add_one)
    w.init()
    n = 64
    x, y = w.create_buffer(n * 4), w.create_buffer(n * 4)
    view_array(x.tensor((n,), F32))[...] = 7
    batch = TaskArgsBatch.tiled([(x.tensor((n,), F32), IN, (8,)), (y.tensor((n,), F32), OUT, (8,))])
    futures = [
        w.submit(lambda o, _a, _c: o.submit_sub_many(h, batch)),
        w.submit(lambda o, _a, _c: o.submit_sub_many(h, [])),
    ]
    for f in futures:
        f.result(timeout=60)
    np.testing.assert_array_equal(view_array(y.tensor((n,), F32)), np.full(n, 8, np.float32))


def test_a_nested_run_submits_a_tiled_batch_within_what_its_parent_forwarded(closing):
    w4 = Worker(level=4)
    for _ in range(2):
        w4.add_worker(Worker(level=3, num_chips=1))
    closing(w4)
    vadd = w4.register(ChipCallable("std.vector_add"))

    def tiled_add(o, a, _cfg):
        ops = [(a[0], IN, (8,)), (a[1], IN, (8,)), (a[2], OUT, (8,))]
        o.submit_many(vadd, TaskArgsBatch.tiled(ops), workers=0)
        with pytest.raises(ValueError, match="task 0 of the batch"):  # the whole buffer was not forwarded
            whole = Tensor(a[2].buffer, (a[2].buffer.nbytes // 4,), F32)
            o.submit_many(vadd, [args((a[0], IN), (a[1], IN), (whole, OUT))])

    fwd = w4.register(tiled_add)
    w4.init()
    n = 64
    x, y, big = (w4.create_buffer(n * 4) for _ in range(3))
    view_array(x.tensor((n,), F32))[...] = np.arange(n, dtype=np.float32)
    view_array(y.tensor((n,), F32))[...] = 2
    halves = [[b.tensor((n // 2,), F32, byte_offset=k * n * 2) for b in (x, y, big)] for k in range(2)]
    batch = [args((h[0], IN), (h[1], IN), (h[2], OUT)) for h in halves]
    w4.run(lambda o, _a, _c: o.submit_many(fwd, batch, workers=[0, 1]))
    np.testing.assert_array_equal(view_array(big.tensor((n,), F32)), np.arange(n, dtype=np.float32) + 2)
