"""forwarded_args (simpler.tree.nested): a parent's task blob as a nested run's
TaskArgs and the scope that holds its submits, with and without tensors."""

import pytest

from simpler import CallConfig, DataType, TaskArgs, TensorArgType
from simpler._core import write_blob
from simpler.model.buffer import create_buffer
from simpler.tree.nested import forwarded_args
from worker_helpers import args

F32 = DataType.FLOAT32


def config(written=(), write_only=(), no_dep=()):
    """A CallConfig whose write mask (bytes 32..63) sets the bits of `written`
    and of `write_only`, and whose write-only mask (bytes 8..31) those of
    `write_only` and of `no_dep`."""
    c = bytearray(64)
    for i in (*written, *write_only):
        c[32 + i // 8] |= 1 << (i % 8)
    for i in (*write_only, *no_dep):
        c[8 + i // 8] |= 1 << (i % 8)
    return CallConfig.from_bytes(bytes(c))


@pytest.fixture
def buf():
    b = create_buffer(256)
    yield b
    b.close()


def test_a_task_without_tensors_forwards_its_scalars_in_order_and_holds_no_submit(buf):
    fwd, scope = forwarded_args(write_blob(args(scalars=(5, 2**64 - 1, 0))), config())
    assert fwd.tensor_count == 0
    assert fwd.scalars == [5, 2**64 - 1, 0]
    # nothing was forwarded, so nothing the nested run names is out of scope
    scope.check(args((buf.tensor((64,), F32), TensorArgType.INOUT)), "submit")


def test_an_empty_task_forwards_nothing():
    fwd, _ = forwarded_args(write_blob(TaskArgs()), config())
    assert (fwd.tensor_count, fwd.scalar_count) == (0, 0)


def test_a_tensor_the_parent_only_writes_is_forwarded_as_output_existing(buf):
    low, high = buf.tensor((16,), F32), buf.tensor((16,), F32, byte_offset=64)
    blob = write_blob(args((low, TensorArgType.OUTPUT_EXISTING), (high, TensorArgType.INOUT)))
    fwd, _ = forwarded_args(blob, config(written=(1,), write_only=(0,)))
    assert fwd.tags == [TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT]
    assert config(write_only=(0,)).writes_only(0) and not config(written=(0,)).writes_only(0)


def test_forwarded_tensors_are_tagged_by_the_write_mask_and_hold_submits_to_their_views(buf):
    low, high = buf.tensor((16,), F32), buf.tensor((16,), F32, byte_offset=64)
    blob = write_blob(args((low, TensorArgType.INPUT), (high, TensorArgType.INOUT), scalars=(9,)))
    fwd, scope = forwarded_args(blob, config(written=(1,)))
    assert fwd.tags == [TensorArgType.INPUT, TensorArgType.INOUT]
    assert fwd.scalars == [9]
    scope.check(args((high, TensorArgType.OUTPUT_EXISTING)), "submit")
    with pytest.raises(ValueError, match=r"argument 0 \(OUTPUT_EXISTING\).*written by"):
        scope.check(args((low, TensorArgType.OUTPUT_EXISTING)), "submit")
    with pytest.raises(ValueError, match="outside every view"):
        scope.check(args((buf.tensor((64,), F32), TensorArgType.INPUT)), "submit")


def test_a_no_dep_tensor_is_forwarded_as_no_dep(buf):
    # It arrived as INPUT: a nested run ordered it against the writers of its view.
    low, high = buf.tensor((16,), F32), buf.tensor((16,), F32, byte_offset=64)
    blob = write_blob(args((low, TensorArgType.NO_DEP), (high, TensorArgType.INPUT)))
    fwd, _ = forwarded_args(blob, config(no_dep=(0,)))
    assert fwd.tags == [TensorArgType.NO_DEP, TensorArgType.INPUT]
    c = config(no_dep=(0,))
    assert c.no_dep(0) and not c.writes(0) and not c.writes_only(0) and not c.no_dep(1) and not c.no_dep(500)
