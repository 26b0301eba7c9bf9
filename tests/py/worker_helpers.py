"""Helpers for the Worker end-to-end tests: argument lists, the test chip
library (tests/py/chip_sources/test_kernels.cpp), a whole-test time bound, and
the checks that close() left no child behind."""

import faulthandler
import functools
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from simpler import ChipCallable, DataType, TaskArgs, Worker

CHIP_SOURCES = Path(__file__).parent / "chip_sources"
TEST_KERNELS = CHIP_SOURCES / "test_kernels.cpp"


def args(*pairs, scalars=()):
    """TaskArgs from (tensor, tag) pairs and u64 scalars."""
    ta = TaskArgs()
    for t, tag in pairs:
        ta.add_tensor(t, tag)
    for s in scalars:
        ta.add_scalar(s)
    return ta


def nested_tree(closing, children=2, chips=2, subs=0, top_subs=0, **options):
    """A level-4 Worker with `children` level-3 Workers of `chips` chips each (not initialised)."""
    w4 = Worker(level=4, num_sub_workers=top_subs, **options)
    for _ in range(children):
        w4.add_worker(Worker(level=3, num_chips=chips, num_sub_workers=subs))
    closing(w4)
    return w4


@functools.lru_cache(maxsize=None)
def kernels_library() -> str:
    """The test kernels built once per session (a content-hash cache hit afterwards)."""
    return ChipCallable.from_source(TEST_KERNELS, "test.stamp").library


def kernel_callable(name: str) -> ChipCallable:
    """test.stamp, test.fail, test.rendezvous, test.gate or test.overrun from the test library."""
    return ChipCallable.from_library(kernels_library(), name)


def chip_device() -> str:
    """The device the tests' chips drive: SIMPLER_DEVICE (the default of Worker.device), else simulated."""
    return os.environ.get("SIMPLER_DEVICE") or "simulated"


def fail_cause() -> str:
    """What test.fail's kernel (test_fail) reports on this device: its own message on
    a simulated chip; on an OpenCL chip its launch fails, by the OpenCL error's name."""
    return "CL_INVALID_KERNEL_ARGS" if chip_device() == "opencl" else "test.fail: deliberate failure 42"


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped by whoever adopted it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def descendants(pid: int) -> list:
    """Every process below `pid` (from /proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def wait_gone(pids, bound_s: float = 10.0) -> list:
    """The pids still alive after waiting up to bound_s for every one to exit."""
    deadline = time.monotonic() + bound_s
    left = [p for p in pids if p > 0]
    while left and time.monotonic() < deadline:
        left = [p for p in left if alive(p)]
        if left:
            time.sleep(0.02)
    return left


def close_and_check(w) -> None:
    """close() the Worker and assert none of its children outlived it."""
    pids = w.child_pids()
    w.close()
    survivors = [p for p in pids if p > 0 and alive(p)]
    assert not survivors, f"children {survivors} outlived close()"


@pytest.fixture
def closing():
    """Collects Workers and closes each at teardown, checking no child outlives it."""
    made = []
    yield made.append
    for w in made:
        close_and_check(w)


@pytest.fixture(autouse=True)
def time_bound():
    """A hang fails the run instead of blocking it: after 120 s the tracebacks are
    dumped and the process exits (the Worker's children die with it)."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


class Gate:
    """Holds chip tasks back until the orch fn has submitted everything: the
    test.gate task (on `chip`) waits for a file, `hold` is the view it writes,
    and a task that names `hold` as an INPUT runs only after `open()`.

        g = Gate(w, tmp_path); handle = w.register(kernel_callable("test.gate"))
        g.submit(o, handle)               # in the orch fn, first
        ... submit the task to hold back with g.hold as an INPUT, and its successors ...
        g.open()                          # last
    """

    def __init__(self, worker, tmp_path, hold=None, timeout_ms: int = 10_000):
        """`hold`: the view the gate task names as its output (bytes left as they
        are); by default 64 bytes of a buffer of its own."""
        from simpler import DataType

        self.file = os.path.join(str(tmp_path), "gate-open")
        path = self.file.encode() + b"\0"
        self._path_buf = worker.create_buffer(len(path))
        self._path_buf.shm.buf[: len(path)] = path
        self.path = self._path_buf.tensor((len(path),), DataType.UINT8)
        if hold is None:
            hold = worker.create_buffer(64).tensor((16,), DataType.FLOAT32)
        self.hold = hold
        self.timeout_ms = timeout_ms

    def submit(self, orch, handle, chip: int = 0):
        from simpler import TensorArgType

        return orch.submit_next_level(
            handle,
            args(
                (self.path, TensorArgType.INPUT), (self.hold, TensorArgType.OUTPUT_EXISTING), scalars=(self.timeout_ms,)
            ),
            worker=chip,
        )

    def open(self):
        open(self.file, "w").close()


def interrupted_behind_gate(w, orch, cancelled: int) -> None:
    """Runs `orch`, which ends in a KeyboardInterrupt while a Gate's task (task 1 of run 0) holds
    chip 0, and checks the interrupt's note: `cancelled` tasks cancelled (withdrawn ones among
    them, not listed as still running), the gate still running."""
    with pytest.raises(KeyboardInterrupt) as err:
        w.run(orch)
    assert err.value.__notes__ == [
        f"Worker.run interrupted: {cancelled} task(s) not yet started were cancelled; still running on their "
        "children, and waited for by the next run(): task 1 of run 0 (callable 'test.gate', member 0) on chip 0"
    ]


def path_tensor(buf_owner, path):
    """A UINT8 tensor holding `path` NUL-terminated, in a buffer of its own."""
    data = str(path).encode() + b"\0"
    b = buf_owner.create_buffer(len(data))
    b.shm.buf[: len(data)] = data
    return b.tensor((len(data),), DataType.UINT8)


def rendezvous_dir(buf_owner, tmp_path):
    """A UINT8 tensor holding tmp_path NUL-terminated: where two rendezvous tasks
    (test.rendezvous on chips, meet_partner in sub-workers) leave their marks."""
    return path_tensor(buf_owner, tmp_path)


def wait_for_file(a) -> None:
    """A sub-worker gate: returns once the file whose path argument 0 holds (path_tensor) exists;
    raises after 30 s, saying the thread or task that makes it never ran."""
    path = bytes(a.array(0)).rstrip(b"\0").decode()
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared: what makes it never ran")
        time.sleep(0.001)


def killer_once_started(pid: int, tmp_path, bound_s: float = 10.0) -> threading.Thread:
    """A thread (not started) that SIGKILLs `pid` once rendezvous task 0 marked
    itself running in tmp_path (<tmp_path>/0), or after bound_s."""

    def kill() -> None:
        deadline = time.monotonic() + bound_s
        while not (Path(tmp_path) / "0").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)

    return threading.Thread(target=kill)


def meet_partner(where, me: int, timeout_s: float = 10.0) -> None:
    """Inside a sub-worker task: marks task `me` (0 or 1) as running in the
    rendezvous_dir array `where` and waits until task 1 - me runs too; two such
    tasks return only when both run at once (TimeoutError after timeout_s)."""
    path = bytes(where).split(b"\0")[0].decode()
    open(os.path.join(path, str(me)), "w").close()
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(os.path.join(path, str(1 - me))):
        if time.monotonic() > deadline:
            raise TimeoutError(f"sub task {me} waited in vain for its partner")
        time.sleep(0.001)
