"""TaskHandles (what submit_many / submit_sub_many return) and Orchestrator.submitted:
read-only sequences whose handles are made when read, and are exactly the
handles the engine gave the batch's tasks (checked against the trace's SUBMIT
events, which the engine records per task)."""

from collections.abc import Sequence

import pytest

from simpler import DataType, MappedArgs, SubmittedTasks, TaskArgsBatch, TaskHandle, TaskHandles, TensorArgType, Worker
from simpler._core import TracePhase
from worker_helpers import args, closing  # noqa: F401

F32_TILES = 7


def noop(_a: MappedArgs) -> None:
    return None


def _run_batches(closing, runs=2):
    """Per run: a one-at-a-time submit, then a batch of F32_TILES sub tasks, then another one-at-a-time submit.
    Returns (per run: (batch, submitted as a list, submitted, the one-at-a-time handles)), the SUBMIT events."""
    w = Worker(level=3, num_sub_workers=1, trace=True)
    closing(w)
    h = w.register(noop)
    w.init()
    buf = w.create_buffer(F32_TILES * 16 * 4)
    whole = buf.tensor((F32_TILES * 16,), DataType.FLOAT32)
    seen = []

    def orch(o, _a, _c):
        first = o.submit_sub(h, args((buf.tensor((16,), DataType.FLOAT32), TensorArgType.INPUT)))
        batch = o.submit_sub_many(h, TaskArgsBatch.tiled([(whole, TensorArgType.OUTPUT_EXISTING, (16,))]))
        last = o.submit_sub(h, args((buf.tensor((16,), DataType.FLOAT32), TensorArgType.INPUT)))
        seen.append((batch, list(o.submitted), o.submitted, (first, last)))

    for _ in range(runs):
        w.run(orch)
    submits = [e.task for e in w.trace_events() if e.phase == TracePhase.SUBMIT]
    return seen, submits


def test_a_batch_is_the_handles_the_engine_gave_its_tasks(closing):
    seen, submits = _run_batches(closing)
    assert len(submits) == 2 * (F32_TILES + 2)
    for r, (batch, submitted, live, (first, last)) in enumerate(seen):
        run_submits = submits[r * (F32_TILES + 2) : (r + 1) * (F32_TILES + 2)]
        assert isinstance(batch, TaskHandles) and isinstance(batch, Sequence)
        assert len(batch) == F32_TILES
        assert list(batch) == run_submits[1:-1]  # exactly the engine's handles, in submit order
        assert all(type(t) is TaskHandle and t.run == r for t in batch)
        assert [t.id for t in batch] == list(range(first.id + 1, first.id + 1 + F32_TILES))
        # Orchestrator.submitted: every task of the run, the batch's included, in order.
        assert submitted == [first, *batch, last] == run_submits
        assert isinstance(live, SubmittedTasks) and isinstance(live, Sequence)
        assert live == submitted and len(live) == F32_TILES + 2
        assert batch == run_submits[1:-1] and batch == tuple(run_submits[1:-1])
        assert batch != run_submits[1:] and batch != run_submits[:-2]


def test_indexing_slicing_and_iteration(closing):
    seen, _ = _run_batches(closing, runs=1)
    batch, handles = seen[0][0], seen[0][1][1:-1]
    n = len(handles)
    for i in range(-n, n):
        assert batch[i] == handles[i]
    for s in (
        slice(None),
        slice(2, 5),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(5, 1, -2),
        slice(-3, None),
        slice(4, 2),
        slice(100, 200),
        slice(-100, 3),
    ):
        part = batch[s]
        assert isinstance(part, TaskHandles)
        assert list(part) == handles[s], s
        assert len(part) == len(handles[s])
        if len(part):
            assert part[-1] == handles[s][-1]
    assert list(reversed(batch)) == handles[::-1]
    assert list(reversed(batch[1:4])) == handles[1:4][::-1]
    assert [t for t in batch] == handles and list(iter(batch)) == handles  # iterable twice
    assert handles[3] in batch and batch.index(handles[3]) == 3 and batch.count(handles[3]) == 1
    assert batch[::2].index(handles[4]) == 2 and handles[3] not in batch[::2]
    assert batch.index(handles[4], 2, 5) == 4
    outside = TaskHandle(handles[0].id, handles[0].run + 1)  # the same id in another run
    assert outside not in batch and batch.count(outside) == 0 and "x" not in batch
    with pytest.raises(ValueError, match=r"is not in the TaskHandles"):
        batch.index(outside)
    with pytest.raises(ValueError, match=r"is not in the TaskHandles"):
        batch.index(handles[4], 5)
    with pytest.raises(TypeError):
        hash(batch)
    assert repr(batch) == (
        f"TaskHandles({n} tasks: task {handles[0].id}, ..., task {handles[-1].id} of run {handles[0].run})"
    )
    assert repr(batch[:0]) == "TaskHandles(0 tasks)" and list(batch[:0]) == []


def test_an_index_out_of_range_names_it_and_the_length(closing):
    seen, _ = _run_batches(closing, runs=1)
    batch, live = seen[0][0], seen[0][2]
    n = len(batch)
    for i in (n, -n - 1, 2**40):
        with pytest.raises(IndexError, match=rf"TaskHandles index {i} out of range \(the batch holds {n} tasks\)"):
            batch[i]
    with pytest.raises(IndexError, match=r"index 1 out of range \(the batch holds 1 task\)"):
        batch[2:3][1]
    with pytest.raises(IndexError, match=rf"Orchestrator.submitted index {n + 2} out of range \({n + 2} tasks"):
        live[n + 2]
    with pytest.raises(TypeError):
        batch["0"]
    with pytest.raises(ValueError):
        batch[::0]


def test_submitted_reads_every_task_by_index_and_slice(closing):
    seen, _ = _run_batches(closing, runs=1)
    handles, live = seen[0][1], seen[0][2]
    n = len(handles)
    assert [live[i] for i in range(-n, n)] == handles + handles
    assert live[1:-1] == handles[1:-1] and live[::-3] == handles[::-3]
    assert list(live) == handles and live == tuple(handles) and live != handles[:-1]
    assert repr(live).startswith(f"SubmittedTasks({n} tasks: {handles[0].name()}, ..., ")


def test_a_refused_batch_adds_nothing_to_submitted(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    h = w.register(noop)
    w.init()
    buf = w.create_buffer(256)
    t = buf.tensor((16,), DataType.FLOAT32)
    seen = {}

    def orch(o, _a, _c):
        ok = o.submit_sub_many(h, [args((t, TensorArgType.INPUT))])
        overlap = args((t, TensorArgType.OUTPUT_EXISTING), (t, TensorArgType.INOUT))
        with pytest.raises(ValueError, match="task 1 of the batch refused"):
            o.submit_sub_many(h, [args((t, TensorArgType.INPUT)), overlap])
        seen["submitted"] = list(o.submitted)
        seen["ok"] = list(ok)
        seen["empty"] = o.submit_sub_many(h, [])

    w.run(orch)
    assert seen["submitted"] == seen["ok"] and len(seen["ok"]) == 1
    assert len(seen["empty"]) == 0 and list(seen["empty"]) == [] and seen["empty"] == []


def test_submitted_keeps_ids_not_handles_and_grows_after_it_was_read(closing):
    """One-at-a-time submits are recorded as ids (8 bytes each, no handle object kept); the sequence,
    read between submits, counts the part of ids that grew since, and a batch between two runs of
    single submits keeps the order."""
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    h = w.register(noop)
    w.init()
    x = w.create_buffer(16 * 4).tensor((16,), DataType.FLOAT32)
    seen = {}

    def orch(o, _a, _c):
        singles = [o.submit_sub(h, args((x, TensorArgType.INPUT))) for _ in range(3)]
        seen["after 3"] = len(o.submitted)
        singles.append(o.submit_sub(h, args((x, TensorArgType.INPUT))))
        seen["after 4"] = (len(o.submitted), o.submitted[-1])
        batch = o.submit_sub_many(h, [args((x, TensorArgType.INPUT))] * 2)
        last = o.submit_sub(h, args((x, TensorArgType.INPUT)))
        seen["all"] = (list(o.submitted), [*singles, *batch, last])
        seen["parts"] = [type(p).__name__ for p in o._submitted]

    w.run(orch)
    assert seen["after 3"] == 3
    assert seen["after 4"][0] == 4
    assert seen["after 4"][1] == seen["all"][1][3]
    got, want = seen["all"]
    assert got == want and len(got) == 7
    assert seen["parts"] == ["SubmittedIds", "TaskHandles", "SubmittedIds"]
