"""Host buffers that outlive their tasks: Worker.release_buffer and Buffer.close()
never free bytes a queued or running task names. The bytes (the /dev/shm
object) stay until the last such task finishes and go then; a buffer no
unfinished task names goes at once, even while unrelated tasks run; a submit
naming a released buffer is refused; once freed, every child drops the identity
from its import cache and refuses a late descriptor of it; and an array a
sub-worker callable kept past its task still reads the old bytes after the
free."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from simpler import ChipCallable, DataType, ImportRefused, TensorArgType, Worker
from simpler.abi import write_blob
from simpler.model.buffer import default_registry
from worker_helpers import Gate, args, closing, kernel_callable, time_bound  # noqa: F401 - fixtures

F32 = DataType.FLOAT32
U8 = DataType.UINT8
I64 = DataType.INT64
IN = TensorArgType.INPUT
OUT = TensorArgType.OUTPUT_EXISTING
N = 16
BOUND_S = 30.0


def shm_path(buf) -> str:
    return "/dev/shm/" + buf.shm.name


def wait_for_file(path: str, what: str) -> None:
    """A hang guard, not a timing claim: waits (bounded) until `path` exists."""
    deadline = time.monotonic() + BOUND_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: {path} never appeared")
        time.sleep(0.002)


def path_of(view) -> str:
    return bytes(view).split(b"\0")[0].decode()


# -- sub-worker callables (forked at init; they read their paths from their arguments) --


def held_double(a):
    """Marks itself started, waits for the gate file, then out = in * 2.
    args: [paths (UINT8: 'started\\0gate\\0'), in, out]."""
    started, gate = bytes(a.array(0)).split(b"\0")[:2]
    open(started.decode(), "w").close()
    deadline = time.monotonic() + BOUND_S
    while not os.path.exists(gate.decode()):
        if time.monotonic() > deadline:
            raise TimeoutError("held_double: the gate never opened")
        time.sleep(0.002)
    a.array(2)[...] = a.array(1) * 2


def probe_cache(a):
    """Reports on this sub-worker's import cache. args: [blob bytes of a TaskArgs
    naming the probed view (UINT8), a length (scalar 0)] -> out INT64 [in cache,
    refusal name's first byte or 0, kept alive by exports]."""
    from simpler.abi import read_blob

    n = a.scalars[0]
    probed = read_blob(bytes(a.array(0)[:n])).tensors[0]
    reg = default_registry()
    out = a.array(1)
    out[0] = int(probed.buffer.identity in reg.identities())
    try:
        reg.map_arg(probed)
        out[1] = 0
    except ImportRefused as e:
        out[1] = 1 if str(e).startswith("STALE_GENERATION") else 2
    out[2] = reg.kept_for_exports


_kept = {}


def keep_view(a):
    """Keeps a NumPy array over its INPUT view past the task."""
    _kept["a"] = a.array(0)


def read_kept(a):
    """out = the kept array (the old buffer's bytes) + in (a new buffer's)."""
    a.array(1)[...] = _kept["a"] + a.array(0)


def sum_into(a):
    """out[0] = the sum of in."""
    a.array(1)[0] = a.array(0).sum()


def paths_tensor(w, tmp_path, *names):
    text = b"".join(str(tmp_path / n).encode() + b"\0" for n in names)
    b = w.create_buffer(len(text))
    b.shm.buf[: len(text)] = text
    return b.tensor((len(text),), U8)


def blob_tensor(w, view):
    """A buffer holding write_blob(TaskArgs naming `view`): how a test hands a
    child a descriptor the engine will no longer carry."""
    blob = write_blob(args((view, IN)))
    b = w.create_buffer(len(blob))
    b.shm.buf[: len(blob)] = blob
    return b.tensor((len(blob),), U8), len(blob)


@pytest.mark.parametrize("how", ["release_buffer", "close"])
def test_release_waits_for_in_flight_chip_and_sub_tasks(closing, tmp_path, how):
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    closing(w)
    gate_k = w.register(kernel_callable("test.gate"))
    copy = w.register(ChipCallable("std.copy"))
    double = w.register(held_double)
    probe = w.register(probe_cache)
    w.init()
    x = w.create_buffer(2 * N * 4)
    x.array((2 * N,), F32)[...] = np.arange(2 * N, dtype=np.float32)
    x_chip = x.tensor((N,), F32)
    x_sub = x.tensor((N,), F32, byte_offset=N * 4)
    y_chip = w.create_buffer(N * 4)
    y_sub = w.create_buffer(N * 4)
    y_chip.array((N,), F32)[...] = -1
    y_sub.array((N,), F32)[...] = -1
    g = Gate(w, tmp_path, hold=x_chip)  # the chip task in flight names x
    sub_paths = paths_tensor(w, tmp_path, "sub-started", "gate-open")
    late, late_n = blob_tensor(w, x_sub)
    x_path = shm_path(x)
    seen = {}

    def orch(o, _a, _c):
        g.submit(o, gate_k)
        o.submit_next_level(copy, args((x_chip, IN), (y_chip.tensor((N,), F32), OUT)), worker=0)
        o.submit_sub(double, args((sub_paths, IN), (x_sub, IN), (y_sub.tensor((N,), F32), OUT)))
        wait_for_file(str(tmp_path / "sub-started"), "the sub task")  # provably running
        if how == "release_buffer":
            w.release_buffer(x)
        else:
            x.close()
        seen["exists"] = os.path.exists(x_path)
        seen["pending"] = x.free_pending
        with pytest.raises(ValueError, match="was released") as refused:
            o.submit_sub(double, args((sub_paths, IN), (x_sub, IN), (y_sub.tensor((N,), F32), OUT)))
        seen["refusal"] = str(refused.value)
        g.open()

    w.run(orch)
    assert seen["exists"] and seen["pending"], "the bytes went while tasks still named them"
    assert "free is pending" in seen["refusal"]
    assert not os.path.exists(x_path), "freed once the tasks finished"
    assert not x.free_pending
    np.testing.assert_array_equal(y_chip.array((N,), F32), np.arange(N, dtype=np.float32))
    np.testing.assert_array_equal(y_sub.array((N,), F32), np.arange(N, 2 * N, dtype=np.float32) * 2)

    # After the free: a submit naming it is refused as released, and the sub-worker
    # forgot it (not in its cache) and refuses a late descriptor of it.
    def after(o, _a, _c):
        with pytest.raises(ValueError, match="released"):
            o.submit_sub(double, args((sub_paths, IN), (x_sub, IN), (y_sub.tensor((N,), F32), OUT)))

    w.run(after)
    report = w.create_buffer(3 * 8)
    report.array((3,), I64)[...] = -1
    w.run(lambda o, _a, _c: o.submit_sub(probe, args((late, IN), (report.tensor((3,), I64), OUT), scalars=(late_n,))))
    in_cache, refused_stale, kept = report.array((3,), I64)
    assert in_cache == 0, "the sub-worker's import cache still holds the freed buffer"
    assert refused_stale == 1, "a late descriptor of the freed buffer was not refused as stale"
    assert kept == 0
    assert all(not s.lost and not s.below_lost for s in w.child_status()), w.child_status()  # the forgets were served


def test_release_of_idle_buffer_is_immediate_while_another_task_runs(closing, tmp_path):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    double = w.register(held_double)
    w.init()
    busy_in = w.create_buffer(N * 4)
    busy_out = w.create_buffer(N * 4)
    busy_in.array((N,), F32)[...] = 3
    idle = w.create_buffer(N * 4)
    idle_out = w.create_buffer(N * 4)
    idle.array((N,), F32)[...] = 1
    sub_paths = paths_tensor(w, tmp_path, "started", "gate")
    open_paths = paths_tensor(w, tmp_path, "started-2", "gate")
    seen = {}

    # idle was named by a task that has finished: nothing unfinished names it now.
    open(tmp_path / "gate", "w").close()
    w.run(
        lambda o, _a, _c: o.submit_sub(
            double, args((open_paths, IN), (idle.tensor((N,), F32), IN), (idle_out.tensor((N,), F32), OUT))
        )
    )
    os.remove(tmp_path / "gate")  # the next task waits again
    idle_path = shm_path(idle)

    def orch(o, _a, _c):
        o.submit_sub(double, args((sub_paths, IN), (busy_in.tensor((N,), F32), IN), (busy_out.tensor((N,), F32), OUT)))
        wait_for_file(str(tmp_path / "started"), "the held task")
        w.release_buffer(idle)
        seen["gone"] = not os.path.exists(idle_path)
        seen["pending"] = idle.free_pending
        open(tmp_path / "gate", "w").close()

    w.run(orch)
    assert seen["gone"] and not seen["pending"], "an unrelated running task delayed the free"
    np.testing.assert_array_equal(busy_out.array((N,), F32), np.full(N, 6, np.float32))


def test_release_wait_true_returns_after_the_free(closing, tmp_path):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    double = w.register(held_double)
    w.init()
    x = w.create_buffer(N * 4)
    x.array((N,), F32)[...] = 5
    out = w.create_buffer(N * 4)
    sub_paths = paths_tensor(w, tmp_path, "started", "gate")
    x_path = shm_path(x)
    result = {}

    def release():
        w.release_buffer(x, wait=True)
        result["exists_at_return"] = os.path.exists(x_path)

    t = threading.Thread(target=release)

    def orch(o, _a, _c):
        o.submit_sub(double, args((sub_paths, IN), (x.tensor((N,), F32), IN), (out.tensor((N,), F32), OUT)))
        wait_for_file(str(tmp_path / "started"), "the held task")
        t.start()
        # The task cannot finish before the gate opens, so neither can the free.
        deadline = time.monotonic() + BOUND_S
        while not x.closed and t.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        result["returned_early"] = not t.is_alive()
        open(tmp_path / "gate", "w").close()

    w.run(orch)
    t.join(BOUND_S)
    assert not t.is_alive()
    assert not result["returned_early"]
    assert result["exists_at_return"] is False
    np.testing.assert_array_equal(out.array((N,), F32), np.full(N, 10, np.float32))


def test_release_wait_true_of_idle_buffer(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    w.init()
    x = w.create_buffer(64)
    path = shm_path(x)
    w.release_buffer(x, wait=True)
    assert not os.path.exists(path)
    assert x.closed and not x.free_pending


def test_release_refuses_while_the_owner_mapping_is_exported(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    w.init()
    x = w.create_buffer(64)
    arr = x.array((16,), F32)
    with pytest.raises(BufferError):
        w.release_buffer(x)
    assert not x.closed and os.path.exists(shm_path(x))
    del arr
    w.release_buffer(x)
    assert x.closed


def test_kept_view_survives_the_free_and_slot_reuse(closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    keep = w.register(keep_view)
    read = w.register(read_kept)
    w.init()
    old = w.create_buffer(N * 4)
    old.array((N,), F32)[...] = np.arange(N, dtype=np.float32)
    w.run(lambda o, _a, _c: o.submit_sub(keep, args((old.tensor((N,), F32), IN))))
    old_path = shm_path(old)
    w.release_buffer(old, wait=True)
    assert not os.path.exists(old_path)
    new = w.create_buffer(N * 4)  # may reuse the freed buffer_id slot at the next generation
    new.array((N,), F32)[...] = 100
    out = w.create_buffer(N * 4)
    w.run(lambda o, _a, _c: o.submit_sub(read, args((new.tensor((N,), F32), IN), (out.tensor((N,), F32), OUT))))
    np.testing.assert_array_equal(out.array((N,), F32), np.arange(N, dtype=np.float32) + 100)
    assert "sub-worker 0: usable" in [str(s) for s in w.child_status()]


def test_release_buffer_refuses_bad_arguments_and_changes_nothing(closing):
    w = Worker(level=3)
    closing(w)
    x = w.create_buffer(64)
    with pytest.raises(TypeError, match=r"release_buffer.buffer: expected a Buffer \(got int 3\)"):
        w.release_buffer(3)
    with pytest.raises(TypeError, match=r"release_buffer.wait: expected a bool \(got int 1\)"):
        w.release_buffer(x, wait=1)
    assert not x.closed and os.path.exists(shm_path(x))


def test_a_worker_refuses_to_release_another_workers_buffer(closing):
    # other.release_buffer(h) was accepted: the owner's next submit and its own h.array() were then refused as stale.
    w, other = Worker(level=3, num_sub_workers=1), Worker(level=3, num_sub_workers=1)
    closing(w)
    closing(other)
    total = w.register(sum_into)
    w.init()
    other.init()
    x, s, out = w.create_buffer(N * 4), w.alloc_shared_tensor((N,), F32), w.create_buffer(4)
    x.array((N,), F32)[...] = 1.0
    for b in (x, s):
        with pytest.raises(ValueError, match=r"belongs to another Worker \(L3\).*that Worker's release_buffer"):
            other.release_buffer(b)
        assert not b.closed
    assert os.path.exists(shm_path(x))
    w.run(lambda o, _a, _c: o.submit_sub(total, args((x.tensor((N,), F32), IN), (out.tensor((1,), F32), OUT))))
    assert out.array((1,), F32)[0] == N
    w.release_buffer(x, wait=True)  # its own Worker may
    assert x.closed


def test_a_child_that_never_answers_a_forget_is_lost_at_the_task_timeout(closing):
    """A stopped sub-worker (SIGSTOP) cannot answer the forget a release sends it: at task_timeout
    it is lost, as a child that overruns a task is, and the task queued behind the forget fails
    naming why instead of waiting for ever (it waited past 15 s with task_timeout=3 before)."""
    w = Worker(level=3, num_sub_workers=1, task_timeout=1)
    closing(w)
    fn = w.register(sum_into)
    w.init()
    (pid,) = w.child_pids()
    x, out = w.create_buffer(N * 4).tensor((N,), F32), w.create_buffer(N * 4).tensor((N,), F32)
    gone = w.create_buffer(64)
    os.kill(pid, signal.SIGSTOP)
    w.release_buffer(gone)  # no task names it: freed now, and forgotten on every lane
    with pytest.raises(RuntimeError) as info:
        w.run(lambda o, _a, _c: o.submit_sub(fn, args((x, IN), (out, OUT))))
    msg = str(info.value)
    assert (
        "not dispatched to sub-worker 0: the child is gone (TIMED_OUT: it did not answer a forget message "
        "(buffers released) within task_timeout (1 s); the child was killed)" in msg
    ), msg
    (status,) = w.child_status()
    assert status.lost and "forget message" in status.why, status
