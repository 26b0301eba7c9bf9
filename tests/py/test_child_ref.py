"""One spelling of "which child" and "which task": ChildRef.name() is what every
child status line, trace lane and run error says, and a submit returns a
TaskHandle (task id + run) whose name() the errors and the trace use."""

import pytest

from simpler import ChildKind, ChildRef, ChipCallable, DataType, TaskHandle, TensorArgType, Worker, view_array
from simpler.runtime.trace import chrome_trace, intervals
from worker_helpers import args, close_and_check


def test_names():
    assert ChildRef(ChildKind.CHIP, 0).name() == "chip 0"
    assert ChildRef(ChildKind.SUB_WORKER, 1).name() == "sub-worker 1"
    assert ChildRef(ChildKind.WORKER, 2).name() == "worker 2"
    assert ChildRef(ChildKind.CHIP, 3) == ChildRef(ChildKind.CHIP, 3) != ChildRef(ChildKind.SUB_WORKER, 3)
    assert len({ChildRef(ChildKind.CHIP, 3), ChildRef(ChildKind.CHIP, 3), ChildRef(ChildKind.WORKER, 3)}) == 2
    assert TaskHandle(3, 1).name() == "task 3 of run 1"
    assert TaskHandle(3, 1) == TaskHandle(3, 1) != TaskHandle(3, 2)


def _boom(a):
    raise KeyError("boom")


def _fill(a):
    a.array(0)[...] = 1


@pytest.fixture
def worker():
    w = Worker(level=3, num_chips=2, num_sub_workers=1, trace=True)
    yield w
    close_and_check(w)


def test_status_trace_lanes_and_errors_name_children_and_tasks_by_their_handles(worker):
    copy = worker.register(ChipCallable("std.copy"))
    fill, boom = worker.register(_fill), worker.register(_boom)
    worker.init()
    src, dst = worker.create_buffer(64), worker.create_buffer(64)
    x = src.tensor((16,), DataType.FLOAT32)
    y = dst.tensor((16,), DataType.FLOAT32)
    handles = []

    def first(o, _a, _c):
        handles.append(o.submit_sub(fill, args((x, TensorArgType.OUTPUT_EXISTING))))
        handles.append(
            o.submit_next_level(copy, args((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)), worker=1)
        )

    worker.run(first)
    assert (view_array(y) == 1).all()
    assert all(isinstance(h, TaskHandle) and h.run == 0 for h in handles)
    assert handles[0].id < handles[1].id

    children = [ChildRef(ChildKind.CHIP, 0), ChildRef(ChildKind.CHIP, 1), ChildRef(ChildKind.SUB_WORKER, 0)]
    assert [str(s) for s in worker.child_status()] == [c.name() + ": usable" for c in children]

    events = worker.trace_events()
    ran = {i.task: i for i in intervals(events)}
    assert set(ran) == set(handles)
    assert ran[handles[0]].lane == ChildRef(ChildKind.SUB_WORKER, 0).name()
    assert ran[handles[1]].lane == ChildRef(ChildKind.CHIP, 1).name()
    trace = chrome_trace(events, num_chips=2, num_sub_workers=1)
    lanes = [e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"]
    assert lanes == ["submit"] + [c.name() for c in children]

    failed = []

    def second(o, _a, _c):
        failed.append(o.submit_sub(boom, args((x, TensorArgType.INPUT))))

    with pytest.raises(RuntimeError) as info:
        worker.run(second)
    (h,) = failed
    assert h.run == 1 and h.id == handles[1].id + 1
    msg = str(info.value)
    assert f"sub {h.name()} " in msg and f" on {ChildRef(ChildKind.SUB_WORKER, 0).name()} failed" in msg, msg
    assert "KeyError" in msg


def test_a_negative_worker_index_is_a_value_error(worker):
    copy = worker.register(ChipCallable("std.copy"))
    worker.init()
    buf = worker.create_buffer(64)
    t = buf.tensor((16,), DataType.FLOAT32)

    def orch(o, _a, _c):
        o.submit_next_level(copy, args((t, TensorArgType.INPUT), (t, TensorArgType.OUTPUT_EXISTING)), worker=-1)

    with pytest.raises(ValueError, match=r"worker=-1: a next-level worker index is >= 0"):
        worker.run(orch)
