"""Misuse gets a clear refusal and harms nothing: a callable handle works only on
the Worker that registered it; a closed Worker refuses init() naming its state;
copy_to / copy_from name a non-view argument; and a process forked from the
Worker's owner can use none of it — nor, when it exits normally, does it shut
down or disturb the owner's children."""

import subprocess
import sys
import textwrap

import pytest

from simpler import DataType, TensorArgType, Worker, view_array
from worker_helpers import args, close_and_check


def _fill(a):
    a.array(0)[...] = 7


def _other(a):
    a.array(0)[...] = -1


def test_a_handle_from_another_worker_is_refused():
    first, second = Worker(num_sub_workers=1), Worker(num_sub_workers=1)
    try:
        fill = first.register(_fill)
        second.register(_other)  # the same id on the second Worker
        first.init()
        second.init()
        buf = second.create_buffer(16)
        t = buf.tensor((4,), DataType.INT32)
        view_array(t)[...] = 0
        with pytest.raises(ValueError, match="'_fill' was registered on another Worker"):
            second.run(lambda o, _a, _c: o.submit_sub(fill, args((t, TensorArgType.OUTPUT_EXISTING))))
        with pytest.raises(ValueError, match="registered on another Worker"):
            second.run(lambda o, _a, _c: o.submit_sub_group(fill, [args((t, TensorArgType.OUTPUT_EXISTING))]))
        assert (view_array(t) == 0).all(), "the other Worker's callable ran"
    finally:
        close_and_check(first)
        close_and_check(second)


def test_init_after_close_names_the_state():
    w = Worker(num_sub_workers=1)
    w.init()
    close_and_check(w)
    with pytest.raises(RuntimeError, match="the Worker is closed; create a new one"):
        w.init()
    with pytest.raises(RuntimeError, match="closed; create a new Worker"):
        w.run(lambda o, _a, _c: None)


def test_copy_to_a_non_view_names_the_argument():
    w = Worker(num_chips=1)
    try:
        w.init()
        host = w.create_buffer(64)

        def orch(o, _a, _c):
            dev = o.alloc_child_tensor(0, (16,), DataType.FLOAT32)
            o.copy_to(dev.base, host.tensor((16,), DataType.FLOAT32))

        with pytest.raises(TypeError, match=r"copy_to destination: expected a Tensor .* got int"):
            w.run(orch)
    finally:
        close_and_check(w)


_FORK_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    from simpler import ChipCallable, DataType, TensorArgType, TaskArgs, Worker, view_array

    def fill(a):
        a.array(0)[...] = 7

    w = Worker(num_chips=1, num_sub_workers=1)
    copy = w.register(ChipCallable("std.copy"))
    h = w.register(fill)
    w.init()
    src, dst = w.create_buffer(16), w.create_buffer(16)
    x, y = src.tensor((4,), DataType.INT32), dst.tensor((4,), DataType.INT32)

    pid = os.fork()
    if pid == 0:
        # The forked copy: every entry point refuses, then the interpreter exits
        # normally, running the Worker's destructors in this process.
        refusals = 0
        for call in (lambda: w.run(lambda o, a, c: None), w.init, lambda: w.register(fill)):
            try:
                call()
            except RuntimeError as e:
                refusals += "forked from the Worker's owner" in str(e)
        sys.exit(0 if refusals == 3 else 3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status

    def orch(o, a, c):
        ta = TaskArgs(); ta.add_tensor(x, TensorArgType.OUTPUT_EXISTING)
        o.submit_sub(h, ta)
        tb = TaskArgs(); tb.add_tensor(x, TensorArgType.INPUT); tb.add_tensor(y, TensorArgType.OUTPUT_EXISTING)
        o.submit_next_level(copy, tb, worker=0)

    w.run(orch)
    assert (view_array(y) == 7).all()
    assert [str(s) for s in w.child_status()] == ["chip 0: usable", "sub-worker 0: usable"], w.child_status()
    w.close()
    print("ok")
""")


def test_a_forked_copy_refuses_every_entry_point_and_its_exit_leaves_the_owner_running(tmp_path):
    script = tmp_path / "fork_after_init.py"
    script.write_text(_FORK_SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_an_orchestrator_refuses_work_after_its_run():
    w = Worker(num_sub_workers=1)
    try:
        fill = w.register(_fill)
        w.init()
        t = w.create_buffer(16).tensor((4,), DataType.INT32)
        view_array(t)[...] = 0
        orch = w.run(lambda o, _a, _c: None)
        for call in (
            lambda: orch.submit_sub(fill, args((t, TensorArgType.OUTPUT_EXISTING))),
            lambda: orch.submit_sub_group(fill, [args((t, TensorArgType.OUTPUT_EXISTING))]),
        ):
            with pytest.raises(RuntimeError, match=r"Orchestrator.submit: this Orchestrator's run has ended"):
                call()
        with pytest.raises(RuntimeError, match=r"Orchestrator.scope: this Orchestrator's run has ended"):
            with orch.scope():
                pass
        w.run(lambda o, _a, _c: None)  # nothing was left behind for the next run
        assert (view_array(t) == 0).all(), "a task submitted after its run ran"
    finally:
        close_and_check(w)


def test_runs_do_not_nest():
    w = Worker(num_sub_workers=1)
    try:
        w.init()
        with pytest.raises(RuntimeError, match="a run is already in progress on this Worker"):
            w.run(lambda o, _a, _c: w.run(lambda o2, _a2, _c2: None))
        w.run(lambda o, _a, _c: None)  # the refused run left the Worker usable
    finally:
        close_and_check(w)
