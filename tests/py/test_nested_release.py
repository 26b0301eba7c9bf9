"""One buffer down a tree of Workers: the same identity at L4, L3 and L2, nothing
mapped on the forwarding hop and one map per buffer in the chip that touches
it; and a buffer released while tasks at L3 and L2 name it: they finish with
the right bytes, the bytes go afterwards, every import cache below forgets it,
and a late descriptor for it is refused at every level."""

import json
import os
import re
import signal

import numpy as np
import pytest

from simpler import AccessMode, ChipCallable, DataType, TaskKind, Tensor, TensorArgType, Worker
from simpler.model.buffer import default_registry
from worker_helpers import args, closing, kernel_callable, time_bound  # noqa: F401

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 256
PATH = 256  # bytes of a gate path at the start of the released buffer


def bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def chip_log(directory) -> list:
    """Every line the chips below wrote to SIMPLER_IMPORT_LOG: (chip, pid, event, maps, cache ids)."""
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.startswith("chip-"):
            continue
        with open(os.path.join(directory, name)) as f:
            for line in f:
                m = re.match(r"chip (\d+) pid (\d+) (\w+) maps (\d+) cache ?(.*)", line.strip())
                assert m, line
                out.append((int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)), m.group(5).split()))
    return out


@pytest.fixture
def import_log(tmp_path, monkeypatch):
    d = tmp_path / "imports"
    d.mkdir()
    monkeypatch.setenv("SIMPLER_IMPORT_LOG", str(d))  # read by each chip lane as it starts
    return d


def test_one_l4_buffer_has_one_identity_at_every_level_no_map_on_the_hop_and_one_in_the_leaf(
    closing, tmp_path, import_log
):
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1))
    closing(w4)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))
    report = tmp_path / "l3.jsonl"

    def forward(o, a, cfg):
        stats = default_registry().stats
        with open(report, "a") as f:
            f.write(
                json.dumps(
                    {
                        "ids": [str(a[i].buffer.identity) for i in range(a.tensor_count)],
                        "maps": stats["maps"],
                        "reexports": stats["reexports"],
                    }
                )
                + "\n"
            )
        o.submit_next_level(add_scalar, a, worker=0)

    h = w4.register(forward)
    w4.init()
    x = w4.create_buffer(N * 4, AccessMode.READ)  # READ-granted: its one mapping is read-only already
    z = w4.create_buffer(N * 4)
    # x stays as created (zeros)
    for _ in range(2):  # twice: the second task finds both buffers mapped
        w4.run(
            lambda o, _a, _c: o.submit_next_level(
                h, args((x.tensor((N,), F32), IN), (z.tensor((N,), F32), OUT), scalars=(bits(1),)), worker=0
            )
        )
    assert (z.array((N,), F32) == 1).all()
    ids = [str(x.identity), str(z.identity)]
    hops = [json.loads(line) for line in report.read_text().splitlines()]
    assert [hop["ids"] for hop in hops] == [ids, ids]  # L3 saw the L4 identities
    assert [hop["maps"] for hop in hops] == [0, 0]  # the forwarding hop mapped nothing
    assert hops[-1]["reexports"] == 4
    leaf = [entry for entry in chip_log(import_log) if entry[2] == "task"]
    assert len(leaf) == 2
    assert sorted(leaf[0][4]) == sorted(ids) and sorted(leaf[1][4]) == sorted(ids)  # L2 holds the same identities
    assert leaf[0][3] == 2 and leaf[1][3] == 2  # one map per buffer, none again for the second task


def _kept(store):
    """A sub callable that records which identities its process's import cache holds."""

    def record(a):
        a.array(1)[0] = 1
        with open(store, "w") as f:
            json.dump([str(i) for i in default_registry().identities()], f)

    return record


def test_release_of_a_buffer_named_by_tasks_in_flight_at_l3_and_l2(closing, tmp_path, import_log):
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=2, num_sub_workers=1))
    w4.add_worker(Worker(level=3, num_chips=1))
    closing(w4)
    gate = w4.register(kernel_callable("test.gate"))
    add_scalar = w4.register(ChipCallable("std.add_scalar"))
    cache_file = tmp_path / "sub-cache.json"
    look = w4.register(_kept(cache_file), kind=TaskKind.SUB)
    kept = {}

    def held_then_add(o, a, cfg):
        # a: [b (INPUT): a gate path in its first PATH bytes, floats after; hold, c, flag (OUTPUT)].
        # Chip 1's gate task reads b's path until the test opens it; chip 0 computes c = b's floats + 1.
        whole = a[0]
        path_view = Tensor(whole.buffer, (PATH,), DataType.UINT8)
        floats = Tensor(whole.buffer, (N,), F32, None, PATH)
        o.submit_next_level(gate, args((path_view, IN), (a[1], OUT), scalars=(30_000,)), worker=1)
        o.submit_next_level(add_scalar, args((floats, IN), (a[2], OUT), scalars=(bits(1),)), worker=0)
        o.submit_sub(look, args((floats, IN), (a[3], OUT)))
        kept["b"] = floats  # a late descriptor, kept past its task

    def late(o, a, cfg):
        o.submit_next_level(add_scalar, args((kept["b"], IN), (a[0], OUT), scalars=(bits(1),)), worker=0)

    def peek(o, a, cfg):
        o.submit_sub(look, args((a[0], IN), (a[1], OUT)))

    h_held, h_late, h_peek = w4.register(held_then_add), w4.register(late), w4.register(peek)
    w4.init()
    path = str(tmp_path / "gate-open").encode() + b"\0"
    assert len(path) <= PATH
    b, c, flag, hold = (w4.create_buffer(n) for n in (PATH + N * 4, N * 4, 4, 64))
    b.shm.buf[: len(path)] = path
    b.array((PATH + N * 4,), DataType.UINT8)[PATH:].view(np.float32)[...] = 41
    name = b.descriptor.body.decode()
    b_id = str(b.identity)
    b_view = b.tensor((PATH + N * 4,), DataType.UINT8)

    def top(o, _a, _c):
        o.submit_next_level(
            h_held,
            args(
                (b_view, IN), (hold.tensor((16,), F32), OUT), (c.tensor((N,), F32), OUT), (flag.tensor((1,), F32), OUT)
            ),
            worker=0,
        )
        # in flight at L3 (the orchestration's run) and at L2 (the gate on chip 1): release it now
        w4.release_buffer(b)
        assert os.path.exists(f"/dev/shm/{name}")  # the tasks that name it still run
        with pytest.raises(ValueError, match="was released"):
            o.submit_next_level(h_peek, args((b_view, IN), (flag.tensor((1,), F32), OUT)), worker=1)
        open(tmp_path / "gate-open", "w").close()

    w4.run(top)
    assert (c.array((N,), F32) == 42).all()  # the tasks read the right bytes
    assert not os.path.exists(f"/dev/shm/{name}")  # freed once they finished
    # every import cache below forgot it: the chips of L3[0] (forget lines), and its sub-worker
    w4.run(
        lambda o, _a, _c: o.submit_next_level(
            h_peek, args((c.tensor((N,), F32), IN), (flag.tensor((1,), F32), OUT)), worker=0
        )
    )
    assert b_id not in json.loads(cache_file.read_text())
    log = chip_log(import_log)
    assert any(b_id in entry[4] for entry in log if entry[2] == "task")  # a chip had mapped it
    last = {}
    for chip, pid, event, _maps, cache in log:
        last[(chip, pid)] = (event, cache)
    assert all(b_id not in cache for _event, cache in last.values())  # and no chip holds it now
    assert any(event == "forget" for event, _cache in last.values())
    # a late descriptor: refused at L4's submit (above), and at L2 when L3 passes on the one it kept
    with pytest.raises(RuntimeError, match=rf"L4 → L3\[0\] → chip 0: .*{re.escape(b_id)}.*(released|STALE)"):
        w4.run(lambda o, _a, _c: o.submit_next_level(h_late, args((c.tensor((N,), F32), OUT)), worker=0))


def test_a_stopped_l3_child_that_never_answers_a_forget_is_lost_at_the_task_timeout(closing):
    """The forget of a released buffer has the task's deadline: an L3 child stopped (SIGSTOP) before
    it came is lost at task_timeout, killed with its chip, and the task queued behind the forget fails
    naming why (it waited past 15 s with task_timeout=3, the child reported usable throughout)."""
    w4 = Worker(level=4, task_timeout=1)
    w4.add_worker(Worker(level=3, num_chips=1))
    closing(w4)
    add_scalar = w4.register(ChipCallable("std.add_scalar"))

    def forward(o, a, _cfg):
        o.submit_next_level(add_scalar, a, worker=0)

    h = w4.register(forward)
    w4.init()
    (l3,) = w4.child_pids()
    x, z = w4.create_buffer(N * 4), w4.create_buffer(N * 4)
    gone = w4.create_buffer(64)
    os.kill(l3, signal.SIGSTOP)
    w4.release_buffer(gone)  # no task names it: freed now, and forgotten on every lane
    with pytest.raises(RuntimeError) as info:
        w4.run(
            lambda o, _a, _c: o.submit_next_level(
                h, args((x.tensor((N,), F32), IN), (z.tensor((N,), F32), OUT), scalars=(bits(1),)), worker=0
            )
        )
    msg = str(info.value)
    assert "TIMED_OUT: it did not answer a forget message (buffers released) within task_timeout (1 s)" in msg, msg
    (status,) = w4.child_status()
    assert status.lost and "forget message" in status.why, status
