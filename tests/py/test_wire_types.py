"""The wire types bound from C++: construction validates field by field, fields
are read-only, equality and hashing follow the C++ operators, and there is no
way to build any of them from bytes."""

import pytest

from conftest import OWNER, make_identity, shm_descriptor, vector_tensor
from simpler import (
    AccessMode,
    AddressSpace,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    ChipTensor,
    DataType,
    Tensor,
    element_size,
)
from simpler.abi import ChipStorageTaskArgs


def test_enum_values_are_the_abi_values():
    assert [v.value for v in (AddressSpace.HOST, AddressSpace.DEVICE)] == [0, 1]
    assert [v.value for v in (AccessMode.READ, AccessMode.WRITE, AccessMode.READWRITE)] == [0, 1, 2]
    assert BackendKind.FORK_SHM.value == 0 and BackendKind.FORK_COW.value == 5
    assert BackendKind.DEVICE_MALLOC.value == 4 and BackendKind.REMOTE_SIDECAR.value == 3
    sizes = {
        "FLOAT32": 4,
        "FLOAT16": 2,
        "INT32": 4,
        "INT16": 2,
        "INT8": 1,
        "UINT8": 1,
        "BFLOAT16": 2,
        "INT64": 8,
        "UINT64": 8,
        "UINT16": 2,
        "UINT32": 4,
        "BOOL": 1,
        "FP8E4M3FN": 1,
        "FP8E8M0": 1,
        "FP4E2M1": 1,
        "FLOAT64": 8,
    }
    for value, (name, size) in enumerate(sizes.items()):
        dtype = getattr(DataType, name)
        assert dtype.value == value
        assert element_size(dtype) == size


def test_identity_equality_and_hash_use_the_three_named_fields():
    a = CanonicalIdentity(OWNER, 3, 2)
    assert a == CanonicalIdentity(OWNER, 3, 2)
    assert hash(a) == hash(CanonicalIdentity(OWNER, 3, 2))
    assert a != CanonicalIdentity(OWNER, 3, 3)
    assert a != CanonicalIdentity(b"\x00" * 8, 3, 2)
    assert {a: 1}[CanonicalIdentity(OWNER, 3, 2)] == 1
    assert "a1b2c3d4e5f60718:3@g2" in repr(a)


@pytest.mark.parametrize(
    "args, match",
    [
        ((b"short", 1, 1), "owner_instance_id: must be exactly 8 bytes"),
        ((OWNER, 0, 1), "buffer_id: must be >= 1"),
        ((OWNER, 1, 0), "generation: must be non-zero"),
    ],
)
def test_identity_refuses_bad_fields(args, match):
    with pytest.raises(ValueError, match=match):
        CanonicalIdentity(*args)


def test_fields_are_read_only():
    d = shm_descriptor()
    t = vector_tensor()
    with pytest.raises(AttributeError):
        d.nbytes = 5
    with pytest.raises(AttributeError):
        t.byte_offset = 4
    with pytest.raises(AttributeError):
        make_identity().generation = 2


def test_no_constructor_from_bytes():
    for cls in (BufferDescriptor, Tensor, ChipTensor, CanonicalIdentity):
        assert not hasattr(cls, "from_bytes")
        assert not hasattr(cls, "frombytes")
        assert not hasattr(cls, "unpack")
    with pytest.raises(TypeError):
        Tensor(b"\x00" * 144)


def test_descriptor_fields_round_trip():
    d = shm_descriptor(4096, AccessMode.READ, b"abc")
    assert d.magic == 0x5342
    assert d.backend_kind == BackendKind.POSIX_SHM
    assert d.address_space == AddressSpace.HOST
    assert d.access == AccessMode.READ
    assert d.nbytes == 4096
    assert d.body == b"abc" and d.body_len == 3
    assert d.address is None
    assert d.identity == make_identity()
    assert "POSIX_SHM" in repr(d) and "name='abc'" in repr(d)


def test_address_descriptor_stores_base_little_endian():
    d = BufferDescriptor.for_address(make_identity(), BackendKind.DEVICE_MALLOC, AccessMode.READWRITE, 64, 0x1122334455)
    assert d.address_space == AddressSpace.DEVICE
    assert d.body == (0x1122334455).to_bytes(8, "little")
    assert d.address == 0x1122334455


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(backend_kind=BackendKind.POSIX_SHM, body=b"a/b"), r"BufferDescriptor.body\[1\]: POSIX_SHM name byte"),
        (dict(backend_kind=BackendKind.POSIX_SHM, body=b""), "BufferDescriptor.body_len: POSIX_SHM name must be 1..32"),
        (dict(backend_kind=BackendKind.POSIX_SHM, body=b"x" * 33), "BufferDescriptor.body_len: must be <= 32"),
        (dict(backend_kind=BackendKind.POSIX_SHM, body=b"a b"), "printable"),
        (dict(backend_kind=BackendKind.FORK_SHM, body=b"\x01" * 7), "exactly 8"),
        (dict(backend_kind=BackendKind.FORK_SHM, body=b"\x00" * 8), "address base must be non-zero"),
        (dict(backend_kind=BackendKind.REMOTE_SIDECAR, body=b"x"), "must be 0 for REMOTE_SIDECAR"),
        (
            dict(backend_kind=BackendKind.FORK_COW, body=b"\x01" * 8, access=AccessMode.WRITE),
            "FORK_COW must grant READ only",
        ),
        (
            dict(backend_kind=BackendKind.FORK_COW, body=b"\x01" * 8, access=AccessMode.READWRITE),
            "FORK_COW must grant READ only",
        ),
        (dict(backend_kind=BackendKind.POSIX_SHM, body=b"n", address_space=AddressSpace.DEVICE), "must be HOST"),
        (
            dict(backend_kind=BackendKind.DEVICE_MALLOC, body=b"\x01" * 8, address_space=AddressSpace.HOST),
            "must be DEVICE",
        ),
        (
            dict(backend_kind=BackendKind.VMM_WINDOW, body=b"\x01" * 8, address_space=AddressSpace.HOST),
            "must be DEVICE",
        ),
    ],
)
def test_descriptor_constructor_refuses_each_rule(kwargs, match):
    args = dict(identity=make_identity(), access=AccessMode.READ, nbytes=64)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        BufferDescriptor(**args)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(backend_kind=BackendKind.POSIX_SHM, body=b"x" * 32),
        dict(backend_kind=BackendKind.POSIX_SHM, body=b"!~"),
        dict(backend_kind=BackendKind.FORK_SHM, body=b"\x00" * 7 + b"\x01"),
        dict(backend_kind=BackendKind.REMOTE_SIDECAR, body=b""),
        dict(backend_kind=BackendKind.REMOTE_SIDECAR, body=b"", address_space=AddressSpace.DEVICE),
        dict(backend_kind=BackendKind.FORK_COW, body=b"\x01" * 8, access=AccessMode.READ),
        dict(backend_kind=BackendKind.VMM_WINDOW, body=b"\x01" * 8),
    ],
)
def test_descriptor_constructor_accepts_the_nearest_valid_values(kwargs):
    args = dict(identity=make_identity(), access=AccessMode.READ, nbytes=64)
    args.update(kwargs)
    BufferDescriptor(**args)


def test_tensor_defaults_to_row_major_and_reports_its_view():
    t = Tensor(shm_descriptor(1024), (3, 4, 5), DataType.FLOAT32)
    assert t.shapes == (3, 4, 5)
    assert t.strides == (20, 5, 1)
    assert t.ndims == 3 and t.byte_offset == 0 and t.dtype == DataType.FLOAT32
    assert t.extent_bytes == 240
    assert t.buffer == shm_descriptor(1024)


def test_tensor_singleton_dimension_keeps_its_stride():
    t = Tensor(shm_descriptor(1024), (1, 8), DataType.UINT8, strides=(64, 1))
    assert t.strides == (64, 1)


@pytest.mark.parametrize(
    "shapes, strides, offset, dtype, nbytes, match",
    [
        ((), None, 0, DataType.FLOAT32, 64, "Tensor.ndims: must be in 1..5"),
        ((1,) * 6, None, 0, DataType.FLOAT32, 64, "Tensor.ndims: must be in 1..5"),
        ((16,), None, 2, DataType.FLOAT32, 128, "Tensor.byte_offset: must be a multiple of the element size"),
        ((4, 0), None, 0, DataType.FLOAT32, 64, r"Tensor.shapes\[1\]: must be > 0"),
        ((4, 4), (0, 1), 0, DataType.FLOAT32, 64, r"Tensor.strides\[0\]: must be > 0"),
        ((17,), None, 0, DataType.FLOAT32, 64, "view must end within buffer.nbytes"),
        ((16,), None, 4, DataType.FLOAT32, 64, "view must end within buffer.nbytes"),
        ((2**31 + 1,), (2**31,), 0, DataType.FLOAT32, 2**64 - 1, "overflows 64 bits"),
        ((2**32 - 1, 2**32 - 1), (2**32 - 1, 2**32 - 1), 0, DataType.INT8, 2**64 - 1, "overflows 64 bits"),
        ((2**32,), None, 0, DataType.INT8, 2**64 - 1, r"Tensor.shapes\[0\]: must fit u32"),
        ((4, 4), (1,), 0, DataType.FLOAT32, 64, "one stride per dimension"),
    ],
)
def test_tensor_constructor_refuses_each_rule(shapes, strides, offset, dtype, nbytes, match):
    with pytest.raises(ValueError, match=match):
        Tensor(shm_descriptor(nbytes), shapes, dtype, strides=strides, byte_offset=offset)


def test_tensor_extent_vectors():
    assert Tensor(shm_descriptor(128), (2, 4, 8), DataType.FLOAT16, strides=(32, 8, 1)).extent_bytes == 128
    with pytest.raises(ValueError, match="view must end within"):
        Tensor(shm_descriptor(127), (2, 4, 8), DataType.FLOAT16, strides=(32, 8, 1))
    rm = Tensor(shm_descriptor(2**64 - 1), (2**32 - 1, 2**32 - 1), DataType.INT8)
    assert rm.extent_bytes == (2**32 - 1) ** 2


def test_tensor_nearest_valid_values_pass():
    Tensor(shm_descriptor(64), (16,), DataType.FLOAT32)  # exactly fills the backing
    Tensor(shm_descriptor(68), (16,), DataType.FLOAT32, byte_offset=4)
    Tensor(shm_descriptor(64), (1, 1, 1, 1, 1), DataType.FLOAT32)
    Tensor(shm_descriptor(64), (4, 1), DataType.FLOAT32, strides=(1, 1))


def test_unknown_dtype_or_backend_is_refused_by_the_binding():
    with pytest.raises(TypeError):
        Tensor(shm_descriptor(64), (4,), 15)
    with pytest.raises((TypeError, ValueError)):
        BufferDescriptor(make_identity(), 6, AccessMode.READ, 64, b"x")


def test_tensor_equality_and_hash():
    a = vector_tensor()
    b = vector_tensor()
    assert a == b and hash(a) == hash(b)
    c = Tensor(shm_descriptor(), (16,), DataType.FLOAT32, byte_offset=4)
    assert a != c
    assert "shapes=(16,)" in repr(a)


def test_chip_tensor_and_storage():
    t = ChipTensor(0x1000, 64, (4, 4), DataType.FLOAT32)
    assert t.strides == (4, 1) and t.start_offset == 0 and t.address_space == AddressSpace.HOST
    with pytest.raises(ValueError, match=r"ChipTensor.start_offset: view must end within buffer.size"):
        ChipTensor(0x1000, 64, (4, 4), DataType.FLOAT32, start_offset=1)
    with pytest.raises(ValueError, match=r"ChipTensor.buffer.addr"):
        ChipTensor(0, 64, (4,), DataType.FLOAT32)
    args = ChipStorageTaskArgs()
    for _ in range(256):
        args.add_tensor(t)
    with pytest.raises(ValueError, match="capacity 256"):
        args.add_tensor(t)
    args.add_scalar(3)
    assert args.tensor_count == 256 and args.scalar(0) == 3
    with pytest.raises(IndexError):
        args.tensor(256)
