"""Worker.take_edge_log is bounded: a Worker created with record_edges=True keeps at most
edge_log_capacity edges between two calls and counts the rest (EdgeLog.dropped), so a long run
that never takes its log does not grow with its tasks; taking the log empties it and makes room."""

import pytest

from simpler import DataType, EdgeLog, MappedArgs, TensorArgType, Worker, view_array
from worker_helpers import args, closing, path_tensor, wait_for_file  # noqa: F401

IN, INOUT = TensorArgType.INPUT, TensorArgType.INOUT
F32 = DataType.FLOAT32


def add_one(a: MappedArgs) -> None:
    a.array(0)[...] += 1


def _chain_edges(w, release, n):
    """Runs a gate task writing a buffer that waits for `release`, then n tasks each adding one to
    it: nothing finishes while they are submitted, so each one's one edge is to the one before.
    Returns the buffer's first element."""
    step, gate = w.register(add_one), w.register(wait_for_file)
    w.init()
    buf, name = w.create_buffer(64), path_tensor(w, release)
    view_array(buf.tensor((16,), F32))[...] = 0

    def orch(o, _a, _c):
        o.submit_sub(gate, args((name, IN), (buf.tensor((16,), F32), INOUT)))
        for _ in range(n):
            o.submit_sub(step, args((buf.tensor((16,), F32), INOUT)))
        release.touch()

    w.run(orch)
    return view_array(buf.tensor((16,), F32))[0]


def test_the_log_keeps_its_capacity_and_counts_the_rest(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1, record_edges=True, edge_log_capacity=5)
    closing(w)
    assert w.config.edge_log_capacity == 5
    assert _chain_edges(w, tmp_path / "go", 40) == 40  # a dropped edge is only not logged: every one held
    log = w.take_edge_log()
    assert isinstance(log, EdgeLog) and isinstance(log, list)
    assert len(log) == 5 and log.dropped == 35
    first = log[0].predecessor
    assert [(e.predecessor, e.successor) for e in log] == [(first + k, first + k + 1) for k in range(5)]
    assert "dropped=35" in repr(log)

    again = w.take_edge_log()  # taken: empty, nothing counted
    assert again == [] and again.dropped == 0 and repr(again) == "[]"


def test_the_default_capacity_keeps_a_whole_log(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1, record_edges=True)
    closing(w)
    assert w.config.edge_log_capacity == 1_000_000
    assert _chain_edges(w, tmp_path / "go", 8) == 8
    log = w.take_edge_log()
    assert len(log) == 8 and log.dropped == 0


@pytest.mark.parametrize("bad", [-1, 1 << 64])
def test_a_capacity_the_field_cannot_hold_is_refused(bad):
    with pytest.raises(ValueError, match="edge_log_capacity"):
        Worker(level=3, edge_log_capacity=bad)
