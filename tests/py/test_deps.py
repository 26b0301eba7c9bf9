"""Dependency inference through Python (docs/explanation/dependencies.md): overlap() answers NONE only
for disjoint views and carries a reason on every fallback PARTIAL; the tracker yields
read-after-write, write-after-write and write-after-read edges, supersedes on COVERED,
retires on complete(), explains every edge, and refuses a bad submit with a ValueError
that names the task, the arguments, the buffer and the rule while recording nothing."""

import pytest

from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    EdgeKind,
    OverlapReason,
    Tensor,
    TensorArgType as T,
    TensorOverlap,
    overlap,
)
from simpler.abi import DependencyTracker

OWNER = bytes.fromhex("0102030405060708")


def matrix(nbytes=256, buffer_id=1, access=AccessMode.READWRITE):
    """A 16x16 UINT8 backing."""
    return BufferDescriptor(CanonicalIdentity(OWNER, buffer_id, 1), BackendKind.POSIX_SHM, access, nbytes, b"deps-py")


def block(buf, r0, r1, c0, c1):
    return Tensor(buf, (r1 - r0, c1 - c0), DataType.UINT8, strides=(16, 1), byte_offset=r0 * 16 + c0)


def test_disjoint_column_blocks_are_none():
    x = matrix()
    assert overlap(block(x, 0, 16, 0, 4), block(x, 0, 16, 8, 12)) == (TensorOverlap.NONE, OverlapReason.NONE)


def test_tile_covers_inner_tile_and_not_the_reverse():
    x = matrix()
    assert overlap(block(x, 0, 8, 0, 8), block(x, 2, 4, 2, 4))[0] == TensorOverlap.COVERED
    assert overlap(block(x, 2, 4, 2, 4), block(x, 0, 8, 0, 8)) == (TensorOverlap.PARTIAL, OverlapReason.SHARED_BYTES)


def test_transposed_view_is_a_fallback_in_the_base_model_and_exact_with_the_extension():
    x = matrix()
    transposed = Tensor(x, (8, 4), DataType.UINT8, strides=(1, 16))  # x[0:4, 0:8].T
    right = block(x, 0, 4, 8, 16)
    assert overlap(transposed, right, exact_strides=False) == (TensorOverlap.PARTIAL, OverlapReason.DIFFERENT_STRIDES)
    assert overlap(transposed, right) == (TensorOverlap.NONE, OverlapReason.NONE)


def test_read_after_write_write_after_read_and_explain():
    x = matrix()
    t = DependencyTracker()
    assert t.submit(1, [block(x, 0, 16, 0, 16)], [T.OUTPUT]) == []
    assert t.submit(2, [block(x, 0, 4, 0, 4)], [T.INPUT]) == [1]
    assert sorted(t.submit(3, [block(x, 0, 8, 0, 8)], [T.OUTPUT_EXISTING])) == [1, 2]
    why = t.explain(2, 3)
    assert why.kind == EdgeKind.WRITE_AFTER_READ
    assert why.successor_arg == 0 and why.predecessor_arg == 0
    assert why.proven
    assert t.explain(3, 2) is None


def test_disjoint_column_writers_rendezvous_without_an_edge():
    x = matrix()
    t = DependencyTracker()
    assert t.submit(1, [block(x, 0, 16, 0, 4)], [T.OUTPUT]) == []
    assert t.submit(2, [block(x, 0, 16, 8, 12)], [T.OUTPUT]) == []


def test_covering_write_supersedes_and_complete_retires():
    x = matrix()
    t = DependencyTracker()
    t.submit(1, [block(x, 0, 8, 0, 8)], [T.OUTPUT])
    assert t.submit(2, [block(x, 0, 16, 0, 16)], [T.INOUT]) == [1]
    assert t.submit(3, [block(x, 0, 2, 0, 2)], [T.INPUT]) == [2]
    for task in (1, 2, 3):
        t.complete(task)
    assert (t.live_tasks, t.live_entries, t.live_keys) == (0, 0, 0)
    with pytest.raises(IndexError):
        t.complete(3)


def test_group_members_are_not_compared_and_share_one_node():
    x = matrix()
    t = DependencyTracker()
    whole = block(x, 0, 16, 0, 16)
    assert t.submit_group(1, [([whole], [T.OUTPUT], 0), ([whole], [T.OUTPUT], 1)]) == []
    assert t.submit(2, [whole], [T.INPUT]) == [1]


def test_refused_submit_names_task_arguments_buffer_rule_and_records_nothing():
    x = matrix()
    ro = matrix(buffer_id=2, access=AccessMode.READ)
    t = DependencyTracker()
    t.submit(1, [block(x, 0, 8, 0, 16)], [T.OUTPUT])
    with pytest.raises(ValueError) as e:
        t.submit(9, [block(x, 0, 8, 0, 8), block(x, 4, 12, 4, 12)], [T.INPUT, T.OUTPUT])
    msg = str(e.value)
    assert "task 9" in msg and "arguments 0 and 1" in msg and "no overlapping writes" in msg
    assert str(x.identity.buffer_id) in msg
    with pytest.raises(ValueError, match="access within grant"):
        t.submit(9, [block(ro, 0, 16, 0, 16)], [T.OUTPUT])
    assert not t.is_live(9)
    assert t.live_entries == 1
    assert t.submit(9, [block(x, 0, 4, 0, 4)], [T.INPUT]) == [1]
