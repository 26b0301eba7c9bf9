"""Worker.take_edge_log is bounded: a Worker created with record_edges=True keeps at most
edge_log_capacity edges between two calls and counts the rest (EdgeLog.dropped), so a long run
that never takes its log does not grow with its tasks; taking the log empties it and makes room."""

import os
import time

import numpy as np
import pytest

from simpler import DataType, EdgeLog, MappedArgs, TensorArgType, Worker, view_array
from worker_helpers import args, closing  # noqa: F401

INOUT = TensorArgType.INOUT
F32 = DataType.FLOAT32


def add_one(a: MappedArgs) -> None:
    a.array(0)[...] += 1


def wait_for_file(a: MappedArgs) -> None:
    path = bytes(a.array(0)).rstrip(b"\0").decode()
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.001)


def _chain(w, release):
    """A gate task writing `buf` that waits for `release`, then tasks each adding one to it:
    nothing finishes while they are submitted, so each one's one edge is to the one before."""
    step, gate = w.register(add_one), w.register(wait_for_file)
    buf, name = w.create_buffer(64), w.create_buffer(256)
    path = np.frombuffer(str(release).encode(), np.uint8)
    view_array(name.tensor((256,), DataType.UINT8))[...] = 0
    view_array(name.tensor((256,), DataType.UINT8))[: len(path)] = path
    view_array(buf.tensor((16,), F32))[...] = 0
    return step, gate, buf, name


def test_the_log_keeps_its_capacity_and_counts_the_rest(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1, record_edges=True, edge_log_capacity=5)
    closing(w)
    release = tmp_path / "go"
    step, gate, buf, name = _chain(w, release)
    w.init()
    assert w.config.edge_log_capacity == 5

    def orch(o, _a, _c):
        first = o.submit_sub(
            gate, args((name.tensor((256,), DataType.UINT8), TensorArgType.INPUT), (buf.tensor((16,), F32), INOUT))
        )
        chain = [first] + [o.submit_sub(step, args((buf.tensor((16,), F32), INOUT))) for _ in range(40)]
        release.touch()
        return chain

    w.run(orch)
    log = w.take_edge_log()
    assert isinstance(log, EdgeLog) and isinstance(log, list)
    assert len(log) == 5 and log.dropped == 35
    assert [(e.predecessor, e.successor) for e in log] == [
        (log[0].predecessor + k, log[0].predecessor + k + 1) for k in range(5)
    ]
    assert "dropped=35" in repr(log)
    assert view_array(buf.tensor((16,), F32))[0] == 40  # a dropped edge is only not logged: every one was kept

    again = w.take_edge_log()  # taken: empty, nothing counted
    assert again == [] and again.dropped == 0 and repr(again) == "[]"


def test_the_default_capacity_keeps_a_whole_log(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1, record_edges=True)
    closing(w)
    assert w.config.edge_log_capacity == 1_000_000
    release = tmp_path / "go"
    step, gate, buf, name = _chain(w, release)
    w.init()

    def orch(o, _a, _c):
        o.submit_sub(
            gate, args((name.tensor((256,), DataType.UINT8), TensorArgType.INPUT), (buf.tensor((16,), F32), INOUT))
        )
        for _ in range(8):
            o.submit_sub(step, args((buf.tensor((16,), F32), INOUT)))
        release.touch()

    w.run(orch)
    log = w.take_edge_log()
    assert len(log) == 8 and log.dropped == 0


@pytest.mark.parametrize("bad", [-1, 1 << 64])
def test_a_capacity_the_field_cannot_hold_is_refused(bad):
    with pytest.raises(ValueError, match="edge_log_capacity"):
        Worker(level=3, edge_log_capacity=bad)
