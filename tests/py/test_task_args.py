"""TaskArgs: add_tensor validates and checks access ⊆ granted for the tag,
tensors come before scalars, set_tag re-checks, and indexed access is bounds
checked (len and [i] address the tensors)."""

import pytest

from conftest import make_identity, shm_descriptor, vector_tensor
from simpler import AccessMode, BackendKind, BufferDescriptor, DataType, TaskArgs, Tensor, TensorArgType


@pytest.mark.parametrize(
    "grant, allowed",
    [
        (AccessMode.READ, {TensorArgType.INPUT, TensorArgType.NO_DEP}),
        (AccessMode.WRITE, {TensorArgType.OUTPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.NO_DEP}),
        (AccessMode.READWRITE, set(TensorArgType)),
    ],
)
def test_access_must_cover_the_tag(grant, allowed):
    for tag in TensorArgType:
        args = TaskArgs()
        if tag in allowed:
            args.add_tensor(vector_tensor(access=grant), tag)
            assert args.tag(0) == tag
        else:
            with pytest.raises(ValueError, match=f"argument 0: tag {tag.name} needs access"):
                args.add_tensor(vector_tensor(access=grant), tag)
            assert len(args) == 0


def test_cow_tensor_cannot_be_named_as_an_output():
    d = BufferDescriptor.for_address(make_identity(), BackendKind.FORK_COW, AccessMode.READ, 64, 0x7000)
    args = TaskArgs()
    with pytest.raises(ValueError, match=r"OUTPUT_EXISTING needs access the buffer does not grant.*FORK_COW"):
        args.add_tensor(Tensor(d, (16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)


def test_default_tag_is_input():
    args = TaskArgs()
    args.add_tensor(vector_tensor())
    assert args.tags == [TensorArgType.INPUT]


def test_tensors_come_before_scalars():
    args = TaskArgs()
    args.add_tensor(vector_tensor())
    args.add_scalar(5)
    with pytest.raises(ValueError, match="tensors must come before scalars"):
        args.add_tensor(vector_tensor())
    assert (args.tensor_count, args.scalar_count) == (1, 1)
    assert args.scalars == [5]


def test_set_tag_rechecks_access_and_bounds():
    args = TaskArgs()
    args.add_tensor(vector_tensor(access=AccessMode.READ))
    with pytest.raises(ValueError, match="INOUT needs access"):
        args.set_tag(0, TensorArgType.INOUT)
    assert args.tag(0) == TensorArgType.INPUT
    with pytest.raises(IndexError, match="out of range"):
        args.set_tag(1, TensorArgType.INPUT)
    args.set_tag(0, TensorArgType.NO_DEP)
    args.check_access()


def test_indexing_is_bounds_checked():
    args = TaskArgs()
    a = vector_tensor()
    b = Tensor(shm_descriptor(), (8,), DataType.FLOAT32, byte_offset=64)
    args.add_tensor(a)
    args.add_tensor(b, TensorArgType.OUTPUT)
    assert len(args) == 2
    assert args[0] == a and args[1] == b and args[-1] == b
    with pytest.raises(IndexError):
        args[2]
    with pytest.raises(IndexError):
        args[-3]
    with pytest.raises(IndexError):
        args.scalar(0)


def test_scalars_are_u64():
    args = TaskArgs()
    args.add_scalar(2**64 - 1)
    with pytest.raises(ValueError, match=r"TaskArgs.add_scalar.value: must be >= 0 \(got -1\)"):
        args.add_scalar(-1)
    with pytest.raises(ValueError, match=r"TaskArgs.add_scalar.value: must fit u64"):
        args.add_scalar(2**64)
