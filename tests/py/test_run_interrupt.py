"""A run ends cleanly when it is cut short: close() from another thread makes a
waiting run() raise, naming the tasks that had not finished; Ctrl-C
(KeyboardInterrupt) ends a waiting run() promptly, cancels what was not yet
dispatched, lets what is on a child finish, and leaves the Worker usable and
closable; runs do not nest; an Orchestrator refuses work after its run."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from simpler import DataType, TensorArgType, Worker
from worker_helpers import args, close_and_check, wait_gone


def _wait_for_file(path: str, bound_s: float = 30.0) -> None:
    deadline = time.monotonic() + bound_s
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)


def _hang(a):
    """Marks that it runs (the path in argument 0), then sleeps until its child is stopped."""
    open(bytes(a.array(0)).split(b"\0")[0].decode(), "w").close()
    time.sleep(3600)


def _path_tensor(w, path: str):
    data = path.encode() + b"\0"
    b = w.create_buffer(len(data))
    b.shm.buf[: len(data)] = data
    return b.tensor((len(data),), DataType.UINT8)


def _closing_worker(**options) -> Worker:
    w = Worker(level=3, **options)
    w.config.close_grace = 0.05  # the hung task's child is killed at once
    return w


class _HangingRun:
    """A Worker with one sub-worker, and an orch fn submitting a task that hangs
    (marking `started` once it runs) and a second one queued behind it."""

    def __init__(self, tmp_path):
        self.w = _closing_worker(num_sub_workers=1)
        self.hang = self.w.register(_hang)
        self.w.init()
        self.started = str(tmp_path / "started")
        self.where = _path_tensor(self.w, self.started)
        self.out = self.w.create_buffer(16).tensor((4,), DataType.INT32)
        self.pids = self.w.child_pids()

    def submit(self, o):
        o.submit_sub(self.hang, args((self.where, TensorArgType.INPUT), (self.out, TensorArgType.OUTPUT_EXISTING)))
        # needs the first one's output: queued behind it, never dispatched
        o.submit_sub(self.hang, args((self.where, TensorArgType.INPUT), (self.out, TensorArgType.INPUT)))


def test_close_from_another_thread_makes_the_waiting_run_raise(tmp_path):
    run = _HangingRun(tmp_path)
    w, started, pids = run.w, run.started, run.pids

    def orch(o, _a, _c):
        run.submit(o)

    def close_once_started():
        _wait_for_file(started)
        w.close()

    closer = threading.Thread(target=close_once_started)
    closer.start()
    try:
        with pytest.raises(RuntimeError) as err:
            w.run(orch)
    finally:
        closer.join(60)
    message = str(err.value)
    assert "the Worker was closed while the run waited" in message
    assert "sub task 1 of run 0 (callable '_hang', member 0) on sub-worker 0" in message
    assert "sub task 2 of run 0" in message and "not run: the Worker closed before the task was dispatched" in message
    assert not wait_gone(pids), "a child outlived close()"
    with pytest.raises(RuntimeError, match="closed; create a new Worker"):
        w.run(lambda o, _a, _c: None)


def test_close_before_the_wait_makes_run_raise_too(tmp_path):
    # close() lands while orch_fn is still building: the run's wait sees it at once.
    w = _closing_worker(num_sub_workers=1)
    hang = w.register(_hang)
    w.init()
    started = str(tmp_path / "started")
    where = _path_tensor(w, started)

    def orch(o, _a, _c):
        o.submit_sub(hang, args((where, TensorArgType.INPUT)))
        _wait_for_file(started)
        threading.Thread(target=w.close).start()
        while not w._state.core.closed:
            time.sleep(0.001)

    with pytest.raises(
        RuntimeError,
        match=r"closed while the run waited; these had not finished and never will: "
        r"sub task 1 of run 0 \(callable '_hang', member 0\) on sub-worker 0",
    ):
        w.run(orch)
    close_and_check(w)


# The interrupted program runs in a process of its own: Ctrl-C is a real SIGINT
# to its main thread, which is waiting in run() (GIL released, on a futex). It
# installs Python's Ctrl-C handler itself: a process started with SIGINT ignored
# (a test run launched in the background by a shell without job control) would
# otherwise inherit the ignore, and Python then raises no KeyboardInterrupt.
_INTERRUPTED = textwrap.dedent("""
    import os, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from simpler import DataType, TaskArgs, TensorArgType, Worker, view_array

    tmp = sys.argv[1]
    def path_tensor(w, path):
        data = path.encode() + b"\\0"
        b = w.create_buffer(len(data))
        b.shm.buf[: len(data)] = data
        return b.tensor((len(data),), DataType.UINT8)

    def held(a):
        # runs until the file `release` exists, then writes 1 into its output
        open(os.path.join(tmp, "started"), "w").close()
        while not os.path.exists(os.path.join(tmp, "release")):
            time.sleep(0.005)
        a.array(1)[...] = 1

    def follower(a):
        a.array(1)[...] = a.array(0) + 1
        open(os.path.join(tmp, "follower-ran"), "w").close()

    def other(a):
        a.array(0)[...] = 5

    w = Worker(level=3, num_sub_workers=2)
    hold, follow, oth = w.register(held), w.register(follower), w.register(other)
    w.init()
    x = w.create_buffer(16).tensor((4,), DataType.INT32)
    y = w.create_buffer(16).tensor((4,), DataType.INT32)
    z = w.create_buffer(16).tensor((4,), DataType.INT32)
    for t in (x, y, z):
        view_array(t)[...] = 0
    dummy = path_tensor(w, tmp)

    def orch(o, _a, _c):
        def ta(*pairs):
            r = TaskArgs()
            for t, tag in pairs:
                r.add_tensor(t, tag)
            return r
        o.submit_sub(hold, ta((dummy, TensorArgType.INPUT), (x, TensorArgType.OUTPUT_EXISTING)))
        o.submit_sub(follow, ta((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING)))
        open(os.path.join(tmp, "submitted"), "w").close()

    try:
        w.run(orch)
        print("run returned", flush=True)
    except KeyboardInterrupt as e:
        caught = time.monotonic()
        print("interrupted at", caught, flush=True)
        print("note:", " | ".join(getattr(e, "__notes__", [])), flush=True)
    # the Worker is still usable: the held task finishes once released, the next
    # run waits for it, and the cancelled follower never runs
    open(os.path.join(tmp, "release"), "w").close()
    out_z = TaskArgs()
    out_z.add_tensor(z, TensorArgType.OUTPUT_EXISTING)
    w.run(lambda o, _a, _c: o.submit_sub(oth, out_z))
    print("x", int(view_array(x)[0]), "y", int(view_array(y)[0]), "z", int(view_array(z)[0]), flush=True)
    print("follower ran:", os.path.exists(os.path.join(tmp, "follower-ran")), flush=True)
    pids = w.child_pids()
    w.close()
    print("children left:", [p for p in pids if os.path.exists(f"/proc/{p}")], flush=True)
""")


def test_ctrl_c_ends_a_waiting_run_and_the_worker_goes_on(tmp_path):
    # A process group of its own, signalled as a whole, as a terminal's Ctrl-C
    # does: the children get the SIGINT too.
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_file(str(tmp_path / "started"))
        _wait_for_file(str(tmp_path / "submitted"))
        # The held task runs, so run() has submitted both and waits (or is about to).
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{err}"
    lines = out.splitlines()
    assert lines[0].startswith("interrupted at"), out
    assert (
        "note: Worker.run interrupted: 1 task(s) not yet started were cancelled; still running on their "
        "children, and waited for by the next run(): sub task 1 of run 0 (callable 'held', member 0) on "
        "sub-worker "
    ) in lines[1], out
    assert lines[2] == "x 1 y 0 z 5", out  # held finished, follower never ran, the next run ran
    assert lines[3] == "follower ran: False", out
    assert lines[4] == "children left: []", out


def test_ctrl_c_inside_the_orchestration_function_cancels_without_waiting(tmp_path):
    # KeyboardInterrupt out of orch_fn (Ctrl-C while it builds the graph): run()
    # does not wait for the tasks it submitted (one of them never ends).
    run = _HangingRun(tmp_path)
    w, pids = run.w, run.pids

    def orch(o, _a, _c):
        run.submit(o)
        _wait_for_file(run.started)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as err:
        w.run(orch)
    assert err.value.__notes__ == [
        "Worker.run interrupted: 1 task(s) not yet started were cancelled; still running on their children, and "
        "waited for by the next run(): sub task 1 of run 0 (callable '_hang', member 0) on sub-worker 0"
    ]
    w.close()
    assert not wait_gone(pids), "a child outlived close()"
