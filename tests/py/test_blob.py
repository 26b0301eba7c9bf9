"""The argument blob through Python: write_blob/read_blob round-trip tensors and
scalars; read_blob refuses a bad header before decoding anything, and refuses
every invalid tensor field by name (each ABI validation rule, fed through
hand-patched blob bytes, with its nearest valid value accepted)."""

import struct

import pytest

from conftest import make_identity, shm_descriptor
from simpler import AccessMode, BackendKind, BufferDescriptor, DataType, TaskArgs, Tensor, TensorArgType
from simpler.abi import read_blob, write_blob
from simpler.model.task_interface import blob_size

HEADER = 8
TENSOR = 144


def one_tensor_blob(tensor):
    args = TaskArgs()
    args.add_tensor(tensor, TensorArgType.NO_DEP)
    return bytearray(write_blob(args))


def patched(blob, offset, fmt, value):
    out = bytearray(blob)
    struct.pack_into("<" + fmt, out, HEADER + offset, value)
    return bytes(out)


def test_round_trip_gives_equal_tensors_and_scalars():
    args = TaskArgs()
    d = shm_descriptor(4096)
    tensors = [Tensor(d, (4, 4), DataType.FLOAT32, byte_offset=64 * i) for i in range(5)]
    for i, t in enumerate(tensors):
        args.add_tensor(t, TensorArgType.INPUT if i % 2 else TensorArgType.INOUT)
    for s in (0, 1, 2**64 - 1):
        args.add_scalar(s)
    blob = write_blob(args)
    assert len(blob) == blob_size(5, 3) == 8 + 5 * 144 + 3 * 8
    out = read_blob(blob)
    assert out.tensors == tensors
    assert out.scalars == [0, 1, 2**64 - 1]


def test_empty_blob_round_trips():
    out = read_blob(write_blob(TaskArgs()))
    assert out.tensors == [] and out.scalars == []


@pytest.mark.parametrize("size", [0, 1, 7])
def test_capacity_below_header_is_refused(size):
    with pytest.raises(ValueError, match=r"argument blob.capacity: must hold the 8-byte header"):
        read_blob(b"\x00" * size)


def test_truncated_blob_is_refused():
    blob = write_blob_with(2, 1)
    with pytest.raises(ValueError, match=r"bytes must fit the capacity \(got \d+, max \d+\)"):
        read_blob(blob[:-1])
    read_blob(blob)


def test_counts_claiming_more_than_capacity_are_refused():
    blob = bytearray(write_blob_with(1, 0))
    struct.pack_into("<ii", blob, 0, 2**31 - 1, 2**31 - 1)
    with pytest.raises(ValueError, match=r"bytes must fit the capacity \(got \d+, max \d+\)"):
        read_blob(bytes(blob))


@pytest.mark.parametrize("counts, field", [((-1, 0), "tensor_count"), ((0, -5), "scalar_count")])
def test_negative_counts_are_refused(counts, field):
    blob = bytearray(write_blob_with(1, 1))
    struct.pack_into("<ii", blob, 0, *counts)
    with pytest.raises(ValueError, match=rf"argument blob.{field}: must be >= 0 \(got -"):
        read_blob(bytes(blob))


def write_blob_with(t, s):
    args = TaskArgs()
    for i in range(t):
        args.add_tensor(Tensor(shm_descriptor(4096), (8,), DataType.FLOAT32, byte_offset=32 * i))
    for i in range(s):
        args.add_scalar(i)
    return write_blob(args)


def cow_tensor():
    d = BufferDescriptor.for_address(make_identity(), BackendKind.FORK_COW, AccessMode.READ, 1024, 0x7000)
    return Tensor(d, (4,), DataType.FLOAT32)


def shm_tensor(name=b"abc"):
    return Tensor(shm_descriptor(1024, AccessMode.READWRITE, name), (4, 4), DataType.FLOAT32)


# (tensor factory, field offset in Tensor, struct format, bad value, error pattern, nearest valid value)
RULES = [
    (shm_tensor, 0, "H", 0x5343, r"Tensor.buffer.magic: must be 0x5342 \(got 0x5343\)", 0x5342),
    (shm_tensor, 2, "B", 2, "Tensor.buffer.address_space: must be HOST", 0),
    (shm_tensor, 3, "B", 3, "Tensor.buffer.access: must be READ", 2),
    (shm_tensor, 4, "B", 6, r"Tensor.buffer.backend_kind: must be a known BackendKind \(0..5\) \(got 6\)", 1),
    (shm_tensor, 52, "H", 33, "Tensor.buffer.body_len: must be <= 32", 3),
    (shm_tensor, 24, "I", 0, "Tensor.buffer.identity.generation: must be non-zero", 1),
    (shm_tensor, 2, "B", 1, "Tensor.buffer.address_space: must be HOST for FORK_SHM, FORK_COW and POSIX_SHM", 0),
    (cow_tensor, 3, "B", 1, "Tensor.buffer.access: FORK_COW must grant READ only", 0),
    (cow_tensor, 52, "H", 4, "Tensor.buffer.body_len: must be exactly 8", 8),
    (shm_tensor, 56 + 1, "B", ord("/"), r"Tensor.buffer.body\[1\]: POSIX_SHM name byte", ord("b")),
    (shm_tensor, 56 + 31, "B", 1, r"Tensor.buffer.body\[31\]: must be zero past body_len", 0),
    (cow_tensor, 56 + 8, "B", 0xFF, r"Tensor.buffer.body\[8\]: must be zero past body_len", 0),
    (shm_tensor, 96, "I", 0, "Tensor.ndims: must be in 1..5", 2),
    (shm_tensor, 96, "I", 6, "Tensor.ndims: must be in 1..5", 2),
    (shm_tensor, 140, "B", 16, r"Tensor.dtype: must be a known DataType \(0..15\) \(got 16\)", 0),
    (shm_tensor, 88, "Q", 2, "Tensor.byte_offset: must be a multiple of the element size", 0),
    (shm_tensor, 100 + 4, "I", 0, r"Tensor.shapes\[1\]: must be > 0", 4),
    (shm_tensor, 120, "I", 0, r"Tensor.strides\[0\]: must be > 0", 4),
    (shm_tensor, 100 + 16, "I", 1, r"Tensor.shapes\[4\]: must be 0 past ndims", 0),
    (shm_tensor, 120 + 8, "I", 1, r"Tensor.strides\[2\]: must be 0 past ndims", 0),
    (shm_tensor, 88, "Q", 1024, "Tensor.byte_offset: view must end within buffer.nbytes", 0),
    (shm_tensor, 40, "Q", 63, "Tensor.byte_offset: view must end within buffer.nbytes", 64),
]


@pytest.mark.parametrize("factory, offset, fmt, bad, pattern, good", RULES)
def test_read_blob_refuses_each_rule_and_accepts_the_nearest_valid(factory, offset, fmt, bad, pattern, good):
    blob = one_tensor_blob(factory())
    with pytest.raises(ValueError, match=r"tensor\[0\]: " + pattern):
        read_blob(patched(blob, offset, fmt, bad))
    read_blob(patched(blob, offset, fmt, good))


def test_extent_saturation_cannot_pass_as_a_small_extent():
    # shape 2^31+1, stride 2^31, FLOAT32: wrapping arithmetic would say 4 bytes.
    t = Tensor(shm_descriptor(2**64 - 1), (4,), DataType.FLOAT32)
    blob = one_tensor_blob(t)
    blob = patched(blob, 100, "I", 2**31 + 1)
    blob = patched(blob, 120, "I", 2**31)
    with pytest.raises(ValueError, match="overflows 64 bits"):
        read_blob(blob)


def test_the_error_names_which_tensor_failed():
    blob = bytearray(write_blob_with(3, 0))
    struct.pack_into("<H", blob, HEADER + 2 * TENSOR, 0)
    with pytest.raises(ValueError, match=r"^tensor\[2\]: Tensor.buffer.magic"):
        read_blob(bytes(blob))


def test_pads_and_path_id_are_not_validated():
    blob = one_tensor_blob(shm_tensor())
    for offset, fmt in ((5, "B"), (20 + 8, "I"), (48, "I"), (54, "H"), (141, "B")):
        read_blob(patched(blob, offset, fmt, 0xAB))
