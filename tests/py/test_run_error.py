"""RunError: a run's failure as a value. Each kind of failure — a chip task
that fails, a sub-worker exception, a task past its deadline, a child killed
mid-task — is checked field by field on a level-3 Worker and through a tree
(L4 -> L3 -> chip or sub-worker, and an L3 child killed); the message is
rendered from the same fields, and the error survives a pickle. (A remote L3:
test_remote.py, remote_run_error.py.)"""

import pickle

import pytest

from simpler import ChipCallable, DataType, FailureReport, RunError, TaskKind, TensorArgType, Worker, view_array
from worker_helpers import (  # noqa: F401
    args,
    closing,
    fail_cause,
    kernel_callable,
    killer_once_started,
    nested_tree,
    rendezvous_dir,
)

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32, I32, I64 = DataType.FLOAT32, DataType.INT32, DataType.INT64
N = 64


def raising(a):
    raise ZeroDivisionError("sub-worker boom")


def vec(buf):
    return buf.tensor((N,), F32)


def raised(w, orch) -> RunError:
    with pytest.raises(RunError) as info:
        w.run(orch)
    return info.value


def test_a_chip_failure_at_l3_is_a_run_error_with_its_task_child_cause_and_what_was_not_run(closing):
    w = Worker(level=3, num_chips=2, task_timeout=30)
    closing(w)
    fail = w.register(kernel_callable("test.fail"))
    copy = w.register(ChipCallable("std.copy"))
    w.init()
    x, y = w.create_buffer(N * 4), w.create_buffer(N * 4)
    handles = []

    def orch(o, _a, _c):
        handles.append(o.submit_next_level(fail, args((vec(x), IN), (vec(y), OUT)), worker=1))
        o.submit_next_level(copy, args((vec(y), IN), (vec(x), OUT)), worker=0)  # needs y: not run

    e = raised(w, orch)
    (failed,) = handles
    assert isinstance(e, RuntimeError)
    assert (e.task, e.run, e.callable, e.member) == (failed.id, failed.run, "test.fail", 0)
    assert (e.child_kind, e.child_index, e.not_run) == ("chip", 1, 1)
    assert e.code == "TASK_FAILED" and fail_cause() in e.text, e.text
    assert e.path == ("chip 1",) and len(e.levels) == 1 and e.levels[0].level == 3
    assert str(e) == e.report.render()
    assert str(e).startswith(f"task {failed.id} of run {failed.run} (callable 'test.fail', member 0) on chip 1 ")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is RunError and str(back) == str(e) and back.path == e.path and back.code == e.code


def test_a_sub_worker_exception_is_a_run_error_with_its_traceback_as_the_text(closing):
    w = Worker(level=3, num_sub_workers=1, task_timeout=30)
    closing(w)
    bad = w.register(raising)
    w.init()
    x = w.create_buffer(N * 4)
    e = raised(w, lambda o, _a, _c: o.submit_sub(bad, args((vec(x), OUT))))
    assert (e.callable, e.child_kind, e.child_index, e.not_run) == ("raising", "sub-worker", 0, 0)
    assert e.levels[0].sub and e.code == "TASK_FAILED"
    assert "ZeroDivisionError: sub-worker boom" in e.text and "in raising" in e.text, e.text
    assert e.path == ("sub-worker 0",)


def test_a_task_past_its_deadline_is_a_run_error_timed_out(closing):
    w = Worker(level=3, num_chips=1, task_timeout=0.5)
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    w.init()
    slot = w.create_buffer(16)
    e = raised(w, lambda o, _a, _c: o.submit_next_level(stamp, args((slot.tensor((2,), I64), OUT), scalars=(20_000,))))
    assert (e.code, e.callable, e.child_kind, e.child_index) == ("TIMED_OUT", "test.stamp", "chip", 0)
    assert "overran its deadline" in e.text, e.text


def test_a_child_killed_mid_task_is_a_run_error_child_died(closing, tmp_path):
    w = Worker(level=3, num_chips=1, task_timeout=30)
    closing(w)
    rdv = w.register(kernel_callable("test.rendezvous"))
    w.init()
    (chip0,) = w.child_pids()
    where = rendezvous_dir(w, tmp_path)
    slot = w.create_buffer(8)
    view_array(slot.tensor((2,), I32))[...] = 0

    killer = killer_once_started(chip0, tmp_path)

    def orch(o, _a, _c):
        o.submit_next_level(rdv, args((where, IN), (slot.tensor((2,), I32), OUT), scalars=(0, 10_000)), worker=0)
        killer.start()

    e = raised(w, orch)
    killer.join(10)
    assert (e.code, e.callable, e.child_kind, e.child_index) == ("CHILD_DIED", "test.rendezvous", "chip", 0)
    assert "signal 9" in e.text, e.text


def test_a_chip_failure_two_levels_down_carries_each_workers_part_and_the_whole_path(closing):
    w4 = nested_tree(closing)
    fail = w4.register(kernel_callable("test.fail"))

    def on_chip_1(o, a, cfg):
        o.submit_next_level(fail, a, worker=1)

    failing = w4.register(on_chip_1)
    w4.init()
    a, c = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
    ta = args((vec(a), IN), (vec(c), OUT))
    handles = []
    e = raised(w4, lambda o, _a, _c: handles.append(o.submit_next_level(failing, ta, worker=0)))
    (top,) = handles
    assert e.path == ("L4", "L3[0]", "chip 1")
    assert (e.task, e.run, e.child_kind, e.child_index) == (top.id, top.run, "worker", 0)
    assert e.callable.endswith("on_chip_1")
    assert e.code == "TASK_FAILED" and fail_cause() in e.text
    l4, l3 = e.levels
    assert (l4.level, l4.code, l4.child_kind, l4.child_index) == (4, "FAILED_BELOW", "worker", 0)
    assert (l3.level, l3.callable, l3.child_kind, l3.child_index) == (3, "test.fail", "chip", 1)
    assert str(e) == "L4 → L3[0] → chip 1: " + e.report.render()
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.path == e.path


def test_a_sub_worker_exception_in_an_l3_child_carries_its_traceback_up_to_the_l4(closing):
    w4 = nested_tree(closing, children=1, chips=1, subs=1)
    bad = w4.register(raising, kind=TaskKind.SUB)

    def on_the_sub_worker(o, a, cfg):
        o.submit_sub(bad, a)

    h = w4.register(on_the_sub_worker)
    w4.init()
    x = w4.create_buffer(N * 4)
    e = raised(w4, lambda o, _a, _c: o.submit_next_level(h, args((vec(x), OUT)), worker=0))
    assert e.path == ("L4", "L3[0]", "sub-worker 0") and e.code == "TASK_FAILED"
    assert "ZeroDivisionError: sub-worker boom" in e.text, e.text
    l3 = e.levels[1]
    assert (l3.sub, l3.callable, l3.child_kind, l3.child_index) == (True, "raising", "sub-worker", 0)


def test_a_chip_task_past_its_deadline_in_an_l3_child_is_timed_out_two_levels_down(closing):
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1, task_timeout=0.5))
    closing(w4)
    stamp = w4.register(kernel_callable("test.stamp"))

    def stamping(o, a, cfg):
        o.submit_next_level(stamp, a, worker=0)

    h = w4.register(stamping)
    w4.init()
    slot = w4.create_buffer(16)
    e = raised(w4, lambda o, _a, _c: o.submit_next_level(h, args((slot.tensor((2,), I64), OUT), scalars=(20_000,))))
    assert e.path == ("L4", "L3[0]", "chip 0") and e.code == "TIMED_OUT"
    assert (e.levels[1].callable, e.levels[1].level) == ("test.stamp", 3)


def test_an_l3_child_killed_mid_task_is_child_died_at_the_l4(closing, tmp_path):
    w4 = nested_tree(closing, children=1, chips=1)
    rdv = w4.register(kernel_callable("test.rendezvous"))

    def meeting(o, a, cfg):
        o.submit_next_level(rdv, a, worker=0)

    h = w4.register(meeting)
    w4.init()
    (l3,) = w4.child_pids()
    where = rendezvous_dir(w4, tmp_path)
    slot = w4.create_buffer(8)

    killer = killer_once_started(l3, tmp_path)

    def orch(o, _a, _c):
        o.submit_next_level(h, args((where, IN), (slot.tensor((2,), I32), OUT), scalars=(0, 10_000)), worker=0)
        killer.start()

    e = raised(w4, orch)
    killer.join(10)
    assert e.path == ("L4", "L3[0]") and e.code == "CHILD_DIED" and "signal 9" in e.text, e.text
    assert len(e.levels) == 1 and (e.child_kind, e.child_index) == ("worker", 0)


def test_an_orchestration_that_raises_below_is_a_level_with_no_task(closing):
    w4 = nested_tree(closing, children=1, chips=1)

    def broken(o, a, cfg):
        raise KeyError("no such tile")

    h = w4.register(broken)
    w4.init()
    e = raised(w4, lambda o, _a, _c: o.submit_next_level(h, args(), worker=0))
    assert e.path == ("L4", "L3[0]") and e.code == "RAISED"
    assert not e.levels[1].has_task and "KeyError: 'no such tile'" in e.text
    assert e.child_kind == "worker" and e.levels[0].code == "FAILED_BELOW"


def test_a_report_refused_at_decode_names_the_field():
    with pytest.raises(ValueError, match=r"must start with 'simpler-failure/1"):
        FailureReport.decode("task 3 failed")
    with pytest.raises(ValueError, match=r"FailureReport.of_worker.code: must be RAISED, NOT_STARTED or UNKNOWN"):
        FailureReport.of_worker(3, "TASK_FAILED", "x")
