"""Nested Workers (L4 -> L3 -> L2): a level-4 Worker forks level-3 Workers as
its next-level children, runs orchestration functions in them, forwards its
tensors by re-export, orders their work by the forwarded views, and reports a
failure anywhere below it with the path to where it happened."""

import json
import os

import numpy as np
import pytest

from simpler import AccessMode, BufferDescriptor, ChipCallable, DataType, TaskKind, Tensor, TensorArgType, Worker
from simpler._core import EdgeKind
from simpler.model.buffer import default_registry
from worker_helpers import (  # noqa: F401
    alive,
    args,
    closing,
    descendants,
    fail_cause,
    kernel_callable,
    nested_tree,
    rendezvous_dir,
    time_bound,
    wait_gone,
)

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT
F32 = DataType.FLOAT32
N = 1024


def bits(x: float) -> int:
    """A float32 scalar as the u64 a task carries (std.add_scalar reads its low 32 bits)."""
    return int(np.float32(x).view(np.uint32))


def halves(buf, n=N):
    h = n // 2
    return [buf.tensor((h,), F32, None, k * h * 4) for k in range(2)]


def test_two_l3_children_write_disjoint_halves_of_one_l4_buffer_at_once(closing, tmp_path):
    w4 = nested_tree(closing, record_edges=True)
    rdv = w4.register(kernel_callable("test.rendezvous"))

    def forward(o, a, cfg):
        o.submit_next_level(rdv, a, worker=1)

    fwd = w4.register(forward)
    w4.init()
    where = rendezvous_dir(w4, tmp_path)
    out = w4.create_buffer(N * 4)
    out.array((N,), DataType.INT32)[...] = 0

    def top(o, _a, _c):
        for k in range(2):
            # each half on its own L3 child: the two chip tasks finish only if they run at once
            half = out.tensor((N // 2,), DataType.INT32, None, k * N // 2 * 4)
            o.submit_next_level(fwd, args((where, IN), (half, OUT), scalars=(k, 20_000)), worker=k)

    w4.run(top)
    got = out.array((N,), DataType.INT32)
    assert (got[: N // 2] == 1).all() and (got[N // 2 :] == 2).all()
    assert w4.take_edge_log() == []  # disjoint halves: no edge at L4


def test_overlapping_writes_from_two_l3_children_are_ordered_and_the_edge_explained(closing):
    w4 = nested_tree(closing, record_edges=True)
    vadd = w4.register(ChipCallable("std.vector_add"))

    def add_on_chip(o, a, cfg):
        o.submit_next_level(vadd, a, worker=0)

    fwd = w4.register(add_on_chip)
    w4.init()
    a, b, c = (w4.create_buffer(N * 4) for _ in range(3))
    a.array((N,), F32)[...] = np.arange(N)
    b.array((N,), F32)[...] = 1
    c.array((N,), F32)[...] = -1

    def top(o, _a, _c):
        # c = a + b on L3[0], then c[N/2:] = c[N/2:] + b[N/2:] on L3[1]: ordered after it
        o.submit_next_level(
            fwd, args((a.tensor((N,), F32), IN), (b.tensor((N,), F32), IN), (c.tensor((N,), F32), OUT)), worker=0
        )
        d = w4_d.tensor((N // 2,), F32)
        o.submit_next_level(fwd, args((halves(c)[1], IN), (halves(b)[1], IN), (d, OUT)), worker=1)

    w4_d = w4.create_buffer(N * 2)
    w4.run(top)
    expect = np.arange(N, dtype=np.float32) + 1
    np.testing.assert_array_equal(c.array((N,), F32), expect)
    np.testing.assert_array_equal(w4_d.array((N // 2,), F32), expect[N // 2 :] + 1)
    edges = w4.take_edge_log()
    assert len(edges) == 1, edges
    e = edges[0]
    assert e.kind == EdgeKind.READ_AFTER_WRITE and e.identity == c.identity


def test_a_write_after_write_across_l3_children_is_ordered(closing, tmp_path):
    w4 = nested_tree(closing, record_edges=True)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))

    def fill(o, a, cfg):
        o.submit_next_level(add_scalar, a, worker=0)

    fwd = w4.register(fill)
    w4.init()
    src, out = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
    src.array((N,), F32)[...] = 0

    def top(o, _a, _c):
        o.submit_next_level(
            fwd, args((src.tensor((N,), F32), IN), (out.tensor((N,), F32), OUT), scalars=(bits(1),)), worker=0
        )
        o.submit_next_level(fwd, args((halves(src)[1], IN), (halves(out)[1], OUT), scalars=(bits(2),)), worker=1)

    w4.run(top)
    got = out.array((N,), F32)
    assert (got[: N // 2] == 1).all() and (got[N // 2 :] == 2).all()  # the second write landed last
    edges = w4.take_edge_log()
    assert [e.kind for e in edges] == [EdgeKind.WRITE_AFTER_WRITE] and edges[0].identity == out.identity
    assert "WRITE_AFTER_WRITE" in repr(edges[0]) and "PARTIAL (SHARED_BYTES)" in repr(edges[0])  # proven
    # each L3 child ran one chip task per run: no edge below
    assert w4.take_edge_logs_below() == {"L4/L3[0]": [], "L4/L3[1]": []}


def test_identity_is_the_same_at_l4_and_l3_and_the_forwarding_hop_maps_nothing(closing, tmp_path):
    w4 = nested_tree(closing, children=1, chips=1)
    vadd = w4.register(ChipCallable("std.vector_add"))
    report = tmp_path / "l3.json"

    def forward(o, a, cfg):
        stats = default_registry().stats
        ids = [str(a[i].buffer.identity) for i in range(a.tensor_count)]
        tags = [a.tag(i).name for i in range(a.tensor_count)]
        report.write_text(
            json.dumps(
                {"ids": ids, "tags": tags, "maps": stats["maps"], "reexports": stats["reexports"], "pid": os.getpid()}
            )
        )
        o.submit_next_level(vadd, a, worker=0)

    fwd = w4.register(forward)
    w4.init()
    x, y, z = (w4.create_buffer(64 * 4) for _ in range(3))
    x.array((64,), F32)[...] = 2
    y.array((64,), F32)[...] = 3
    ts = [x.tensor((64,), F32), y.tensor((64,), F32), z.tensor((64,), F32)]
    no_dep = TensorArgType.NO_DEP
    w4.run(lambda o, _a, _c: o.submit_next_level(fwd, args((ts[0], IN), (ts[1], no_dep), (ts[2], OUT)), worker=0))
    seen = json.loads(report.read_text())
    assert seen["ids"] == [str(t.buffer.identity) for t in ts]
    # written, not read: the write-only mask; NO_DEP stays NO_DEP (it arrived as INPUT)
    assert seen["tags"] == ["INPUT", "NO_DEP", "OUTPUT_EXISTING"]
    assert seen["maps"] == 0 and seen["reexports"] == 3 and seen["pid"] != os.getpid()
    assert (z.array((64,), F32) == 5).all()


def test_five_four_three_runs_a_chip_task_through_two_forwarding_hops(closing):
    w5 = Worker(level=5)
    closing(w5)
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1))
    assert w5.add_worker(w4) == 0
    vadd = w5.register(ChipCallable("std.vector_add"))
    fail = w5.register(kernel_callable("test.fail"))

    def l3(o, a, cfg):
        o.submit_next_level(vadd, a, worker=0)

    def l3_fail(o, a, cfg):
        o.submit_next_level(fail, a, worker=0)

    h3, h3_fail = w5.register(l3), w5.register(l3_fail)

    def l4(o, a, cfg):
        o.submit_next_level(h3_fail if a.scalar_count else h3, a, worker=0)

    h4 = w5.register(l4)
    w5.init()
    x, z = w5.create_buffer(N * 4), w5.create_buffer(N * 4)
    x.array((N,), F32)[...] = 4
    w5.run(
        lambda o, _a, _c: o.submit_next_level(
            h4, args((x.tensor((N,), F32), IN), (x.tensor((N,), F32), IN), (z.tensor((N,), F32), OUT)), worker=0
        )
    )
    assert (z.array((N,), F32) == 8).all()
    with pytest.raises(RuntimeError, match=r"^L5 → L4\[0\] → L3\[0\] → chip 0: .*" + fail_cause()):
        w5.run(lambda o, _a, _c: o.submit_next_level(h4, args((z.tensor((N,), F32), OUT), scalars=(1,)), worker=0))


def _sum_halves(a):
    a.array(2)[0] = a.array(0).sum() + a.array(1).sum()


def test_a_group_across_l3_children_is_one_node_and_l4_sub_workers_read_its_output(closing):
    w4 = nested_tree(closing, top_subs=1, record_edges=True)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))

    def fill(o, a, cfg):
        o.submit_next_level(add_scalar, a, worker=1)

    fwd = w4.register(fill)
    total = w4.register(_sum_halves, kind=TaskKind.SUB)
    w4.init()
    src, out, s = w4.create_buffer(N * 4), w4.create_buffer(N * 4), w4.create_buffer(4)
    src.array((N,), F32)[...] = 0

    def top(o, _a, _c):
        group = [
            args((h_in, IN), (h_out, OUT), scalars=(bits(k + 1),))
            for k, (h_in, h_out) in enumerate(zip(halves(src), halves(out), strict=True))
        ]
        o.submit_next_level_group(fwd, group)
        o.submit_sub(total, args(*[(h, IN) for h in halves(out)], (s.tensor((1,), F32), OUT)))

    w4.run(top)
    assert s.array((1,), F32)[0] == N // 2 * 1 + N // 2 * 2
    edges = w4.take_edge_log()
    assert {(e.predecessor, e.successor) for e in edges} == {(1, 2)}  # the group is one node (task ids count from 1)


def test_a_nested_orchestration_may_not_reach_beyond_the_views_it_was_forwarded(closing):
    w4 = nested_tree(closing, children=1, chips=1)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))

    def write_input(o, a, cfg):
        o.submit_next_level(add_scalar, args((a[1], IN), (a[0], OUT), scalars=(bits(1),)), worker=0)

    h_input = w4.register(write_input)
    w4.init()
    src, out = w4.create_buffer(N * 2), w4.create_buffer(N * 4)
    src_t = src.tensor((N // 2,), F32)
    with pytest.raises(RuntimeError, match="outside every view of it written by the parent's task forwarded"):
        w4.run(lambda o, _a, _c: o.submit_next_level(h_input, args((src_t, IN), (halves(out)[1], OUT)), worker=0))
    assert (out.array((N,), F32)[: N // 2] == 0).all()


def test_register_and_add_worker_refuse_what_a_tree_cannot_run(closing):
    w4 = Worker(level=4)
    closing(w4)
    with pytest.raises(ValueError, match="not chips"):
        Worker(level=4, num_chips=1)
    with pytest.raises(ValueError, match="level-3 Workers"):
        w4.add_worker(Worker(level=4))
    w3 = Worker(level=3, num_chips=1)
    with pytest.raises(ValueError, match="next level is chips"):
        w3.add_worker(Worker(level=2 + 1))
    with pytest.raises(ValueError, match="next level of a level-3 Worker is chips"):
        w3.register(lambda o, a, c: None, kind=TaskKind.NEXT_LEVEL)
    own = Worker(level=3, num_chips=1)
    own.register(lambda a: None)
    with pytest.raises(ValueError, match="registered callables of its own"):
        w4.add_worker(own)
    assert w4.add_worker(w3) == 0
    with pytest.raises(ValueError, match="already a child"):
        w4.add_worker(w3)
    with pytest.raises(RuntimeError, match="register on the top Worker"):
        w3.register(lambda a: None)
    chip = w4.register(ChipCallable("std.vector_add"))
    sub = w4.register(lambda a: None, kind=TaskKind.SUB)
    w4.init()
    with pytest.raises(ValueError, match="is a chip orchestration; this NEXT_LEVEL submit of L4 runs on its level-3"):
        w4.run(lambda o, _a, _c: o.submit_next_level(chip, args(), worker=0))
    with pytest.raises(ValueError, match="sub-worker callable; this NEXT_LEVEL submit"):
        w4.run(lambda o, _a, _c: o.submit_next_level(sub, args(), worker=0))


def test_the_trace_of_a_tree_shows_every_level_as_its_own_process_on_one_clock(closing, tmp_path):
    w4 = nested_tree(closing, trace=True, record_edges=True)
    vadd = w4.register(ChipCallable("std.vector_add"))

    def add(o, a, cfg):
        o.submit_next_level(vadd, a, worker=1)

    fwd = w4.register(add)
    w4.init()
    a, c = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
    ta = [args((h, IN), (h, IN), (o, OUT)) for h, o in zip(halves(a), halves(c), strict=True)]
    w4.run(lambda o, _a, _c: [o.submit_next_level(fwd, t, worker=k) for k, t in enumerate(ta)])
    path = tmp_path / "tree.json"
    w4.write_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert sorted(processes.values()) == [
        "simpler Worker L4 (level 4)",
        "simpler Worker L4/L3[0]",
        "simpler Worker L4/L3[1]",
    ]
    by_name = {v: k for k, v in processes.items()}
    slices = [e for e in events if e["ph"] == "X"]
    top = [e for e in slices if e["pid"] == by_name["simpler Worker L4 (level 4)"]]
    assert (
        sorted(e["name"] for e in top)
        == ["test_the_trace_of_a_tree_shows_every_level_as_its_own_process_on_one_clock.<locals>.add"] * 2
    )
    for k in range(2):
        child = [e for e in slices if e["pid"] == by_name[f"simpler Worker L4/L3[{k}]"]]
        assert [e["name"] for e in child] == ["std.vector_add"]
        lane = [
            e
            for e in events
            if e.get("name") == "thread_name" and e["pid"] == child[0]["pid"] and e["tid"] == child[0]["tid"]
        ]
        assert lane[0]["args"]["name"] == "chip 1"
        # on one clock: the chip run lies inside the L4 task's run on that child
        l4 = by_name["simpler Worker L4 (level 4)"]
        worker_lane = next(
            e["tid"]
            for e in events
            if e.get("name") == "thread_name" and e["pid"] == l4 and e["args"]["name"] == f"worker {k}"
        )
        parent = next(e for e in top if e["tid"] == worker_lane)
        assert parent["ts"] <= child[0]["ts"] and child[0]["ts"] + child[0]["dur"] <= parent["ts"] + parent["dur"]


def test_what_an_l3_child_makes_carries_its_owner_path_and_l4_sees_only_an_id(closing, tmp_path):
    w4 = nested_tree(closing)
    vadd = w4.register(ChipCallable("std.vector_add"))
    report = tmp_path / "made.json"

    def make(o, a, cfg):
        host = o.worker.create_buffer(64)
        device = o.alloc_child_tensor(1, (16,), F32)
        try:  # a DEVICE block of chip 1 sent to chip 0: the refusal names where it was made
            o.submit_next_level(
                vadd, args((device.tensor(), IN), (device.tensor(), IN), (device.tensor(), OUT)), worker=0
            )
        except ValueError as e:
            refused = str(e)
        report.write_text(
            json.dumps(
                {
                    "host": repr(host.descriptor),
                    "device": repr(device.descriptor),
                    "refused": refused,
                    "forwarded": repr(a[0].buffer),
                    "host_id": host.descriptor.owner_worker_path_id,
                }
            )
        )

    h = w4.register(make)
    w4.init()
    mine = w4.create_buffer(64)
    assert repr(mine.descriptor).endswith(", owner L4)")
    w4.run(lambda o, _a, _c: o.submit_next_level(h, args((mine.tensor((16,), F32), IN)), worker=1))
    seen = json.loads(report.read_text())
    assert seen["host"].endswith(", owner L4/L3[1])") and seen["host_id"] > 0
    assert seen["device"].endswith(", owner L4/L3[1]/chip 1)")
    assert "(owner L4/L3[1]/chip 1): DEVICE memory of chip 1 may only be dispatched to that chip" in seen["refused"]
    assert seen["forwarded"].endswith(f", owner <path#{mine.descriptor.owner_worker_path_id}>)")  # not minted there


def test_device_memory_cannot_be_allocated_at_l4_and_the_refusal_says_where_it_can(closing):
    w4 = nested_tree(closing, children=1, chips=1)
    w4.init()
    with pytest.raises(
        ValueError,
        match=r"device memory belongs to the chips of a level-3 Worker.*inside the "
        r"orchestration function that runs there",
    ):
        w4.run(lambda o, _a, _c: o.alloc_child_tensor(0, (16,), F32))


def test_a_nested_orchestration_may_not_pass_on_a_forwarded_buffer_with_another_grant(closing):
    w4 = nested_tree(closing, children=1, chips=1)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))

    def upgrade(o, a, cfg):
        d = a[0].buffer
        forged = BufferDescriptor(d.identity, d.backend_kind, AccessMode.READWRITE, d.nbytes, d.body)
        o.submit_next_level(
            add_scalar, args((a[1], IN), (Tensor(forged, (N // 2,), F32), OUT), scalars=(bits(1),)), worker=0
        )

    h = w4.register(upgrade)
    w4.init()
    ro, src = w4.create_buffer(N * 2, AccessMode.READ), w4.create_buffer(N * 2)
    with pytest.raises(RuntimeError, match="with a descriptor other than the one the parent's task forwarded"):
        w4.run(
            lambda o, _a, _c: o.submit_next_level(
                h, args((ro.tensor((N // 2,), F32), IN), (src.tensor((N // 2,), F32), IN)), worker=0
            )
        )
