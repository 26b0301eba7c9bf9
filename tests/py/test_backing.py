"""The owner side and the import side of backings, in one process: Buffer
creation and naming, buffer.tensor(...) defaults and refusals, the host view
accessor (NumPy, buffer protocol, DLPack; read-only for READ grants), the close()
lifecycle (BufferError while a view is exported, retry, idempotent), and every
ImportRegistry refusal with its specific error."""

import os
import stat

import numpy as np
import pytest

from simpler import TaskArgs, TensorArgType
from simpler.model.buffer import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    ImportRefused,
    ImportRegistry,
    check_identity_live,
    create_buffer,
    mapped_array,
    view_array,
)
from simpler.model.task_interface import write_blob
from torch_helpers import require_torch

HOST_BACKENDS = [
    (BackendKind.POSIX_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_COW, AccessMode.READ),
]
M, N = 6, 8


@pytest.fixture(params=HOST_BACKENDS, ids=lambda p: p[0].name)
def matrix(request):
    """A 6x8 float32 matrix, element (i, j) = i * 100 + j, on each host backend."""
    backend, access = request.param
    h = create_buffer(M * N * 4, access=access, backend=backend)
    raw = np.frombuffer(memoryview(h._owner), dtype=np.float32)  # the owner fills its own bytes
    raw[:] = (np.arange(M)[:, None] * 100 + np.arange(N)[None, :]).ravel()
    del raw
    yield h
    h.close()


def test_posix_buffer_is_named_from_its_identity_with_mode_0600():
    with create_buffer(64) as h:
        name = h.shm.name
        assert name.startswith("sp") and len(name) <= 32 and "/" not in name
        assert h.descriptor.body == name.encode()
        ident = h.identity
        assert name.endswith(f"-{ident.buffer_id:x}g{ident.generation:x}")
        assert stat.S_IMODE(os.stat(f"/dev/shm/{name}").st_mode) == 0o600
    assert not os.path.exists(f"/dev/shm/{name}")


def test_tensor_defaults_to_row_major_and_keeps_singleton_strides():
    with create_buffer(4096) as h:
        assert h.tensor((3, 4, 5), DataType.FLOAT32).strides == (20, 5, 1)
        assert h.tensor((3, 1, 4), DataType.FLOAT32, strides=(4, 4, 1)).strides == (4, 4, 1)
        assert h.tensor((4,), DataType.INT8, byte_offset=3).byte_offset == 3


def test_tensor_refuses_zero_stride_and_misaligned_offset():
    with create_buffer(4096) as h:
        with pytest.raises(ValueError, match="strides"):
            h.tensor((4, 4), DataType.FLOAT32, strides=(0, 1))
        with pytest.raises(ValueError, match="byte_offset"):
            h.tensor((4,), DataType.FLOAT32, byte_offset=2)


def test_views_read_back_the_right_elements(matrix):
    c = view_array(matrix.tensor((M, N), DataType.FLOAT32))
    t = view_array(matrix.tensor((N, M), DataType.FLOAT32, strides=(1, N)))
    s = view_array(matrix.tensor((2, 3), DataType.FLOAT32, strides=(N, 1), byte_offset=(2 * N + 4) * 4))
    p = view_array(matrix.tensor((3, 4), DataType.FLOAT32, strides=(2 * N, 2), byte_offset=4))
    full = c.copy()
    assert full[5, 7] == 507
    np.testing.assert_array_equal(t, full.T)
    np.testing.assert_array_equal(s, full[2:4, 4:7])
    np.testing.assert_array_equal(p, full[::2, 1::2])
    assert t.strides == (4, N * 4)


def test_view_is_zero_copy_writable_in_the_owner_and_read_only_elsewhere_for_read_grants(matrix):
    v = view_array(matrix.tensor((M, N), DataType.FLOAT32))
    v[0, 0] = -1  # the owner fills its own bytes whatever it grants
    assert view_array(matrix.tensor((1,), DataType.FLOAT32))[0] == -1
    del v
    pid = os.fork()
    if pid == 0:  # a forked child that inherited the Buffer gets the grant
        code = 3
        try:
            w = view_array(matrix.tensor((M, N), DataType.FLOAT32))
            code = 0 if w.flags.writeable == (matrix.access != AccessMode.READ) else 1
            del w
        finally:
            os._exit(code)
    assert os.waitpid(pid, 0)[1] == 0


def test_view_exports_buffer_protocol_and_dlpack():
    with create_buffer(64) as h:
        v = h.array((16,), DataType.INT32)
        v[:] = np.arange(16)
        mv = memoryview(v)
        assert mv.nbytes == 64 and not mv.readonly
        d = np.from_dlpack(v)
        d[3] = 42
        assert v[3] == 42
        del v, mv, d


def test_shm_buf_works_with_frombuffer_and_blocks_close_until_dropped():
    h = create_buffer(16 * 4)
    a = np.frombuffer(h.shm.buf, dtype=np.float32, count=16)
    a.fill(5.0)
    with pytest.raises(BufferError):
        h.close()
    assert not h.closed
    assert h.array((16,), DataType.FLOAT32)[7] == 5.0  # still usable after the refused close
    del a
    h.close()
    assert h.closed
    h.close()  # idempotent


def test_torch_frombuffer_over_shm_buf():
    torch = require_torch()
    h = create_buffer(8 * 4)
    t = torch.frombuffer(h.shm.buf, dtype=torch.float32, count=8)
    t.fill_(2.5)
    assert h.array((8,), DataType.FLOAT32)[0] == 2.5
    with pytest.raises(BufferError):
        h.close()
    del t
    h.close()


def test_a_live_view_array_blocks_close_and_close_can_be_retried():
    h = create_buffer(64, backend=BackendKind.FORK_SHM)
    v = h.array((16,), DataType.FLOAT32)
    with pytest.raises(BufferError, match="exported"):
        h.close()
    del v
    h.close()
    assert h.closed


def test_closed_buffer_releases_its_identity():
    h = create_buffer(64)
    ident = h.identity
    assert check_identity_live(ident) == ""
    h.close()
    assert "released" in check_identity_live(ident)


def test_cow_buffer_cannot_be_created_or_named_for_writing():
    with pytest.raises(ValueError, match="READ only"):
        create_buffer(64, access=AccessMode.READWRITE, backend=BackendKind.FORK_COW)
    with create_buffer(64, access=AccessMode.READ, backend=BackendKind.FORK_COW) as h:
        args = TaskArgs()
        with pytest.raises(ValueError):
            args.add_tensor(h.tensor((16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)
        assert args.tensor_count == 0


# ---- ImportRegistry -------------------------------------------------------


def _descriptor_like(d, nbytes):
    return BufferDescriptor(d.identity, d.backend_kind, d.access, nbytes, d.body)


def test_map_once_in_python():
    with create_buffer(4096) as h:
        reg = ImportRegistry()
        first = reg.import_backing(h.descriptor)
        assert all(reg.import_backing(h.descriptor) == first for _ in range(999))
        assert reg.stats["maps"] == 1 and reg.stats["hits"] == 999
        reg.close()


def test_different_descriptor_under_a_known_identity_is_refused():
    with create_buffer(4096) as h:
        reg = ImportRegistry()
        reg.import_backing(h.descriptor)
        with pytest.raises(ImportRefused, match=r"^DESCRIPTOR_MISMATCH"):
            reg.import_backing(_descriptor_like(h.descriptor, 1024))
        reg.close()


def test_shm_smaller_than_nbytes_is_refused():
    with create_buffer(4096) as h:
        with pytest.raises(ImportRefused, match=r"^SHM_TOO_SMALL"):
            ImportRegistry().import_backing(_descriptor_like(h.descriptor, 8192))


def test_stale_generation_is_refused_naming_the_generation():
    h = create_buffer(64)
    stale = h.descriptor
    h.close()
    h2 = create_buffer(64)  # reuses the slot at the next generation
    try:
        assert h2.identity.buffer_id == stale.identity.buffer_id
        assert h2.identity.generation == stale.identity.generation + 1
        with pytest.raises(ImportRefused, match=f"^STALE_GENERATION.*generation {stale.identity.generation}"):
            ImportRegistry().import_backing(stale)
    finally:
        h2.close()


def test_device_backing_is_refused_on_a_host_endpoint_and_without_an_owner_record():
    d = BufferDescriptor.for_address(
        CanonicalIdentity(b"\x01" * 8, 5, 1), BackendKind.DEVICE_MALLOC, AccessMode.READWRITE, 64, 0x1000
    )
    with pytest.raises(ImportRefused, match=r"^DEVICE_ON_HOST"):
        ImportRegistry().import_backing(d)
    with pytest.raises(ImportRefused, match=r"^DEVICE_OWNER_UNKNOWN"):
        ImportRegistry(chip_index=0).import_backing(d)


def test_remote_sidecar_is_not_supported_here():
    d = BufferDescriptor(CanonicalIdentity(b"\x02" * 8, 5, 1), BackendKind.REMOTE_SIDECAR, AccessMode.READ, 64)
    with pytest.raises(ImportRefused, match=r"^REMOTE_UNSUPPORTED.*not supported here"):
        ImportRegistry().import_backing(d)


def test_fork_address_outside_a_pre_fork_region_is_refused():
    d = BufferDescriptor.for_address(
        CanonicalIdentity(b"\x03" * 8, 5, 1), BackendKind.FORK_SHM, AccessMode.READWRITE, 64, 0x4000
    )
    with pytest.raises(ImportRefused, match=r"^NOT_A_FORK_REGION"):
        ImportRegistry().import_backing(d)


def test_closed_registry_refuses():
    with create_buffer(64) as h:
        reg = ImportRegistry()
        reg.close()
        reg.close()
        with pytest.raises(ImportRefused, match=r"^REGISTRY_CLOSED"):
            reg.import_backing(h.descriptor)


def test_materialize_args_builds_chip_storage():
    with create_buffer(1024) as h:
        reg = ImportRegistry()
        a = h.tensor((4, 8), DataType.FLOAT16, byte_offset=64)
        out = reg.materialize_args([a, h.tensor((8,), DataType.FLOAT32, byte_offset=512)], [42])
        assert out.tensor_count == 2 and out.scalar(0) == 42
        c = out.tensor(0)
        assert c.addr == reg.import_backing(h.descriptor) and c.size == 1024
        assert c.start_offset == 32 and c.shapes == (4, 8) and c.strides == (8, 1)
        assert out.tensor(1).start_offset == 128
        reg.close()


def test_mapped_arg_is_a_read_only_buffer_for_read_grants_and_blocks_unregister():
    with create_buffer(64, access=AccessMode.READ) as h:
        reg = ImportRegistry()
        arg = reg.map_arg(h.tensor((4,), DataType.INT32, byte_offset=16))
        assert arg.read_only and arg.view_nbytes == 16 and arg.byte_offset == 16
        assert memoryview(arg).readonly and arg.buffer.readonly
        assert not arg.numpy().flags.writeable
        with pytest.raises(BufferError):
            reg.unregister(h.identity)
        with pytest.raises(BufferError):
            reg.close()
        del arg
        assert reg.unregister(h.identity)
        reg.close()


def test_mapped_args_and_mapped_array():
    with create_buffer(64) as h:
        h.array((16,), DataType.INT32)[:] = np.arange(16)
        reg = ImportRegistry()
        args, scalars = reg.map_args([h.tensor((2, 4), DataType.INT32, strides=(8, 2))], [7])
        assert scalars == [7]
        np.testing.assert_array_equal(mapped_array(args[0]), np.arange(16).reshape(2, 8)[:, ::2])
        del args
        reg.close()


def test_map_blob_maps_what_read_blob_decodes_with_the_write_mask():
    with create_buffer(64) as h:
        h.array((16,), DataType.INT32)[:] = np.arange(16)
        ta = TaskArgs()
        ta.add_tensor(h.tensor((2, 4), DataType.INT32, strides=(8, 2)), TensorArgType.INPUT)
        ta.add_tensor(h.tensor((4,), DataType.INT32, byte_offset=32), TensorArgType.INOUT)
        ta.add_scalar(7)
        reg = ImportRegistry()
        args, scalars = reg.map_blob(write_blob(ta), bytes([0b10]) + bytes(31))  # writes tensor 1 only
        assert scalars == [7] and len(args) == 2
        assert args[0].read_only and not args[1].read_only
        np.testing.assert_array_equal(mapped_array(args[0]), np.arange(16).reshape(2, 8)[:, ::2])
        np.testing.assert_array_equal(mapped_array(args[1]), np.arange(8, 12))
        del args
        with pytest.raises(ValueError):  # read_blob's refusal, nothing mapped
            reg.map_blob(b"\x00" * 3)
        assert reg.map_blob(write_blob(TaskArgs())) == ([], [])
        reg.close()


def test_reexport_keeps_the_identity_and_maps_nothing():
    with create_buffer(256) as h:
        reg = ImportRegistry()
        t = h.tensor((8,), DataType.FLOAT32, byte_offset=32)
        fwd = reg.reexport(t)
        assert fwd == t and fwd.buffer.identity == t.buffer.identity
        assert reg.stats["maps"] == 0 and len(reg) == 0
