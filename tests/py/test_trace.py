"""Worker(trace=True) records a timeline of its runs: two sub tasks writing
disjoint slices of one buffer on two sub-workers overlap in it (and write the
right bytes), and so do two chips computing disjoint tiles of one buffer, while
a dependent pair does not; write_trace() writes Chrome Trace
Event Format JSON that loads with json and carries what Perfetto needs (complete
"X" events with ts/dur in microseconds, one named thread per lane, the callable's
name); a Worker without trace refuses write_trace() with a clear message."""

import json
import os
import time
from types import SimpleNamespace

import numpy as np
import pytest

from simpler import DataType, TensorArgType, Worker, view_array
from simpler._core import ChildKind, ChildRef, TaskHandle, TaskKind, TracePhase
from simpler.runtime.trace import TreeTrace, chrome_trace, intervals
from worker_helpers import args, close_and_check, kernel_callable, meet_partner, rendezvous_dir

N = 8


@pytest.fixture
def traced():
    w = Worker(level=3, num_sub_workers=2, trace=True)
    yield w
    close_and_check(w)


def fill_slowly(a):
    """Sleeps 0.2 s, then fills its view with scalar[0]."""
    time.sleep(0.2)
    a.array(0)[...] = a.scalars[0]


def fill_together(a):
    """Meets its partner (scalar 1 is this task's id 0 or 1; tensor 1 is a
    rendezvous_dir), sleeps 0.2 s, then fills its view with scalar[0]: two such
    tasks finish only when both run at once, and fail after 10 s otherwise."""
    meet_partner(a.array(1), a.scalars[1])
    time.sleep(0.2)
    a.array(0)[...] = a.scalars[0]


def copy_plus_one(a):
    a.array(1)[...] = a.array(0) + 1


def _two_disjoint_fills(w, tmp_path):
    """Two sub tasks that must run at once (a rendezvous) fill the two halves of one buffer."""
    h = w.register(fill_together)
    w.init()
    buf = w.create_buffer(2 * N * 4)
    left = buf.tensor((N,), DataType.INT32)
    right = buf.tensor((N,), DataType.INT32, byte_offset=N * 4)
    where = rendezvous_dir(w, tmp_path)

    def orch(o, _a, _c):
        o.submit_sub(h, args((left, TensorArgType.OUTPUT_EXISTING), (where, TensorArgType.INPUT), scalars=(11, 0)))
        o.submit_sub(h, args((right, TensorArgType.OUTPUT_EXISTING), (where, TensorArgType.INPUT), scalars=(22, 1)))

    w.run(orch)
    return buf


def test_disjoint_slices_on_two_sub_workers_overlap_in_the_trace_and_write_the_right_bytes(traced, tmp_path):
    buf = _two_disjoint_fills(traced, tmp_path)
    whole = view_array(buf.tensor((2 * N,), DataType.INT32))
    np.testing.assert_array_equal(whole, np.array([11] * N + [22] * N, dtype=np.int32))
    runs = intervals(traced.trace_events())
    assert len(runs) == 2
    a, b = runs
    assert a.overlaps(b), f"disjoint slices must overlap in time: {a} / {b}"
    assert {a.lane, b.lane} == {"sub-worker 0", "sub-worker 1"}
    assert a.ok and b.ok
    assert a.duration_ns >= 200_000_000, "a RUN interval contains the child's run"


def test_a_dependent_pair_does_not_overlap(traced):
    fill = traced.register(fill_slowly)
    inc = traced.register(copy_plus_one)
    traced.init()
    src = traced.create_buffer(N * 4)
    dst = traced.create_buffer(N * 4)
    s, d = src.tensor((N,), DataType.INT32), dst.tensor((N,), DataType.INT32)

    def orch(o, _a, _c):
        o.submit_sub(fill, args((s, TensorArgType.OUTPUT_EXISTING), scalars=(4,)))
        o.submit_sub(inc, args((s, TensorArgType.INPUT), (d, TensorArgType.OUTPUT_EXISTING)))

    traced.run(orch)
    np.testing.assert_array_equal(view_array(d), np.full(N, 5, dtype=np.int32))
    first, second = intervals(traced.trace_events())
    assert not first.overlaps(second)
    assert first.end_ns <= second.start_ns


def test_disjoint_tiles_of_one_buffer_on_two_chips_overlap_in_the_trace(tmp_path):
    """Interleaved column tiles of one buffer on chips 0 and 1, each a
    test.rendezvous that finishes only when both run at once: the trace shows
    the two RUN intervals overlapping, and each tile holds its chip's bytes."""
    m, n = 8, 16
    with Worker(level=3, num_chips=2, trace=True) as w:
        rdv = w.register(kernel_callable("test.rendezvous"))
        w.init()
        x = w.create_buffer(m * n * 4)
        x.array((m, n), DataType.INT32)[...] = 0
        where = rendezvous_dir(w, tmp_path)

        def orch(o, _a, _c):
            for chip, col in ((0, 0), (1, 8)):
                tile = x.tensor((m, 4), DataType.INT32, (n, 1), col * 4)
                o.submit_next_level(
                    rdv,
                    args((where, TensorArgType.INPUT), (tile, TensorArgType.OUTPUT_EXISTING), scalars=(chip, 10_000)),
                    worker=chip,
                )

        w.run(orch)
        want = np.zeros((m, n), np.int32)
        want[:, 0:4], want[:, 8:12] = 1, 2
        np.testing.assert_array_equal(x.array((m, n), DataType.INT32), want)
        runs = intervals(w.trace_events())
        path_names = chrome_trace(w.trace_events(), {(rdv.kind, rdv.id): rdv.name})
    assert sorted(r.lane for r in runs) == ["chip 0", "chip 1"]
    assert all(r.kind == TaskKind.NEXT_LEVEL and r.ok for r in runs)
    assert runs[0].overlaps(runs[1]), f"tiles that met in a rendezvous must overlap in the trace: {runs}"
    assert {e["name"] for e in path_names["traceEvents"] if e["ph"] == "X"} == {"test.rendezvous"}


def test_write_trace_writes_chrome_trace_json_perfetto_can_load(traced, tmp_path):
    _two_disjoint_fills(traced, tmp_path)
    path = tmp_path / "run.json"
    traced.write_trace(path)
    trace = json.loads(path.read_text())
    assert trace["displayTimeUnit"] == "ns"
    events = trace["traceEvents"]
    pid = os.getpid()
    assert all(e["pid"] == pid and isinstance(e["tid"], int) and isinstance(e["ph"], str) for e in events)
    threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert sorted(threads.values()) == ["sub-worker 0", "sub-worker 1", "submit"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == 2
    for e in slices:
        assert isinstance(e["ts"], float) and isinstance(e["dur"], float)
        assert e["dur"] >= 200_000, "microseconds: the child slept 0.2 s"
        assert e["name"] == "fill_together" and e["args"]["callable"] == "fill_together"
        assert e["args"]["ok"] is True and e["args"]["member"] == 0
        assert threads[e["tid"]].startswith("sub-worker")
    x, y = slices
    assert x["tid"] != y["tid"]
    assert x["ts"] < y["ts"] + y["dur"] and y["ts"] < x["ts"] + x["dur"], "the slices overlap in the file too"
    submits = [e for e in events if e["ph"] == "i"]
    assert sorted(e["args"]["task"] for e in submits) == sorted(e["args"]["task"] for e in slices)
    assert min(e["ts"] for e in events if "ts" in e) == 0.0
    queued = [e for e in events if e.get("cat") == "queue"]
    assert sorted(e["ph"] for e in queued) == ["b", "b", "e", "e"]


def test_a_failed_task_is_a_failed_slice_with_its_error(tmp_path):
    def boom(_a):
        raise KeyError("boom")

    with Worker(level=3, num_sub_workers=1, trace=True) as w:
        h = w.register(boom)
        w.init()
        buf = w.create_buffer(64)
        with pytest.raises(RuntimeError, match="boom"):
            w.run(
                lambda o, a, c: o.submit_sub(
                    h, args((buf.tensor((16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING))
                )
            )
        trace = chrome_trace(w.trace_events(), {(h.kind, h.id): h.name})
    (x,) = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert x["args"]["ok"] is False and "KeyError" in x["args"]["error"]
    assert x["name"].endswith("boom")


def test_chip_lanes_come_first_and_chip_callables_are_named_by_kind_and_id():
    def ev(phase, task, child, kind, callable_id, start, end):
        return SimpleNamespace(
            phase=phase,
            task=TaskHandle(task, 0),
            member=0,
            child=child,
            kind=kind,
            callable=callable_id,
            start_ns=start,
            end_ns=end,
            ok=True,
            error="",
            members=1,
        )

    chip1, sub0 = ChildRef(ChildKind.CHIP, 1), ChildRef(ChildKind.SUB_WORKER, 0)
    events = [
        ev(TracePhase.SUBMIT, 1, chip1, TaskKind.NEXT_LEVEL, 0, 1000, 1000),
        ev(TracePhase.RUN, 1, chip1, TaskKind.NEXT_LEVEL, 0, 2000, 5000),
        ev(TracePhase.RUN, 2, sub0, TaskKind.SUB, 0, 3000, 4000),
    ]
    names = {(TaskKind.NEXT_LEVEL, 0): "matmul", (TaskKind.SUB, 0): "post"}
    trace = chrome_trace(events, names, num_chips=2, num_sub_workers=1, pid=7)
    threads = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert threads == {0: "submit", 1: "chip 0", 2: "chip 1", 3: "sub-worker 0"}
    slices = {e["name"]: e for e in trace["traceEvents"] if e["ph"] == "X"}
    assert threads[slices["matmul"]["tid"]] == "chip 1" and slices["matmul"]["cat"] == "chip"
    assert threads[slices["post"]["tid"]] == "sub-worker 0"
    assert slices["matmul"]["ts"] == 1.0 and slices["matmul"]["dur"] == 3.0, "microseconds from the first event"
    assert slices["matmul"]["args"]["queued_us"] == 1.0
    a, b = intervals(events)
    assert (a.lane, b.lane) == ("chip 1", "sub-worker 0") and a.overlaps(b)


def test_trace_clear_starts_the_next_trace_empty(traced, tmp_path):
    _two_disjoint_fills(traced, tmp_path)
    assert traced.trace_events()
    traced.trace_clear()
    assert traced.trace_events() == []


def test_a_worker_without_trace_refuses_write_trace_with_a_clear_message(tmp_path):
    with Worker(level=3, num_sub_workers=1) as w:
        w.init()
        with pytest.raises(RuntimeError, match=r"records no trace .*Worker\(\.\.\., trace=True\)"):
            w.write_trace(tmp_path / "run.json")
        with pytest.raises(RuntimeError, match="trace=True"):
            w.trace_events()
    assert not (tmp_path / "run.json").exists()


def test_a_nested_worker_killed_while_it_recorded_leaves_what_it_wrote_whole(tmp_path):
    # Found by the chaos programs: a traced L4 whose L3 child was SIGKILLed raised KeyError from close()
    # (the child had created its record file and died before writing a line). An empty file and a torn
    # last line are skipped; the records written whole are kept.
    record = TreeTrace()
    try:
        record.append("L4/L3[0]", 11, {(TaskKind.SUB, 0): "f"}, {ChildKind.SUB_WORKER: 1}, [])
        record.append("L4/L3[1]", 12, {}, {}, [])
        with open(record._file("L4/L3[1]"), "a", encoding="utf-8") as f:
            f.write('{"path": "L4/L3[1]", "pid": 12, "na')  # killed mid-write
        open(record._file("L4/L3[2]"), "a").close()  # killed between open and write
        timelines = record.timelines()
        assert [t.process_name for t in timelines] == ["simpler Worker L4/L3[0]", "simpler Worker L4/L3[1]"]
        assert [t.pid for t in timelines] == [11, 12]
    finally:
        record.remove()
