"""Buffers and views: the wire types of the L3+ memory model, the owner of a
backing, and host access to a view's bytes.

`BufferDescriptor` says how to find a backing, `Tensor` names a strided view over
one. Both are the C++ structs of src/simpler/task_interface/buffer.h bound
directly; each constructor validates, and no function here builds one from bytes.

`Buffer` owns one host backing (POSIX_SHM, FORK_SHM or FORK_COW; the C++
`BackingOwner`), names views over it with `tensor(...)`, and releases it with
`close()`, which raises `BufferError` while any exported view of the bytes is
alive, and frees the bytes once no unfinished task of this process names
them. `view_array(tensor)` is the host accessor: a zero-copy NumPy array of
exactly the view's bytes with its strides, the same call for every host
backend, in the owner or in a consumer process: writable in the process that
created the buffer (the owner fills its own bytes whatever it grants), read-only
elsewhere when the grant is READ.
`ImportRegistry` and `MappedArg` are the consumer side.
"""

from __future__ import annotations

import atexit
import os
import sys
import weakref
from typing import Any, List, Optional, Sequence

import numpy as np

from simpler._core import (
    AccessMode,
    AddressSpace,
    BackendKind,
    BackingOwner,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    ImportRefusal,
    ImportRefused,
    ImportRegistry,
    MappedArg,
    Tensor,
    check_identity_live,
    create_fork_cow,
    create_fork_shm,
    create_posix_shm,
    current_process_id,
    element_size,
)
from simpler.model.arg_checks import check_int, check_type

__all__ = [
    "AccessMode",
    "AddressSpace",
    "BackendKind",
    "BackingOwner",
    "Buffer",
    "BufferDescriptor",
    "CanonicalIdentity",
    "DataType",
    "ImportRefusal",
    "ImportRefused",
    "ImportRegistry",
    "MappedArg",
    "SharedTensor",
    "Tensor",
    "check_identity_live",
    "create_buffer",
    "default_registry",
    "element_size",
    "mapped_array",
    "numpy_dtype",
    "view_array",
]

# The NumPy element type a view is exposed as. Types NumPy lacks are exposed as
# their raw bits: BFLOAT16 as uint16, the FP8 and FP4 types as uint8 (one byte an
# element, as the ABI addresses them).
NUMPY_DTYPES: dict[DataType, np.dtype] = {
    DataType.FLOAT32: np.dtype(np.float32),
    DataType.FLOAT16: np.dtype(np.float16),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT16: np.dtype(np.int16),
    DataType.INT8: np.dtype(np.int8),
    DataType.UINT8: np.dtype(np.uint8),
    DataType.BFLOAT16: np.dtype(np.uint16),
    DataType.INT64: np.dtype(np.int64),
    DataType.UINT64: np.dtype(np.uint64),
    DataType.UINT16: np.dtype(np.uint16),
    DataType.UINT32: np.dtype(np.uint32),
    DataType.BOOL: np.dtype(np.bool_),
    DataType.FP8E4M3FN: np.dtype(np.uint8),
    DataType.FP8E8M0: np.dtype(np.uint8),
    DataType.FP4E2M1: np.dtype(np.uint8),
    DataType.FLOAT64: np.dtype(np.float64),
}


def numpy_dtype(dtype: DataType) -> np.dtype:
    """The NumPy dtype a view of `dtype` is exposed as (same element size)."""
    return NUMPY_DTYPES[dtype]


def _export(exporter: Any) -> memoryview:
    """A memoryview of a bound object that exports the buffer protocol (BackingOwner,
    MappedArg); the generated stub cannot declare that protocol."""
    return memoryview(exporter)


def _array_over(
    exporter: Any, shapes: Sequence[int], strides: Sequence[int], dtype: DataType, offset: int, readonly: bool
) -> np.ndarray:
    """A strided array over `exporter`'s bytes from `offset`. np.frombuffer holds
    a memoryview of the exporter for the array's lifetime, so the export (and a
    Buffer's refusal to close) lasts exactly as long as the array."""
    np_dtype = numpy_dtype(dtype)
    itemsize = np_dtype.itemsize
    extent = (1 + sum((n - 1) * s for n, s in zip(shapes, strides, strict=True))) * itemsize
    src = _export(exporter)
    if readonly and not src.readonly:
        src = src.toreadonly()
    flat = np.frombuffer(src, dtype=np.uint8, count=extent, offset=offset).view(np_dtype)
    return np.lib.stride_tricks.as_strided(
        flat,
        shape=tuple(shapes),
        strides=tuple(s * itemsize for s in strides),
        writeable=not readonly,
    )


class SharedMemoryView:
    """What `Buffer.shm` is for a POSIX_SHM backing: `.name`, `.size` and `.buf`,
    like multiprocessing.shared_memory.SharedMemory. `.buf` is a writable
    memoryview of every byte; a frombuffer array keeps it alive, and then
    `Buffer.close()` raises BufferError."""

    def __init__(self, owner: BackingOwner):
        self._owner = owner
        self._buf: Optional[memoryview] = None

    @property
    def name(self) -> str:
        name = self._owner.shm_name
        assert name is not None, "a SharedMemoryView exists only over a POSIX_SHM backing"
        return name

    @property
    def size(self) -> int:
        return self._owner.nbytes

    @property
    def buf(self) -> memoryview:
        if self._buf is None:
            self._buf = _export(self._owner)
        return self._buf

    def _release(self) -> None:
        # memoryview.release() raises BufferError while the view is exported. A
        # torch.frombuffer tensor (or a kept `h.shm.buf`) holds a *reference* to the
        # memoryview but no export, so release() alone would succeed and leave it
        # pointing at unmapped bytes: refuse while anyone else references it. The
        # two references expected are self._buf and getrefcount's own argument.
        if self._buf is not None:
            if sys.getrefcount(self._buf) > 2:
                raise BufferError(
                    f"Buffer.close: shm {self._owner.descriptor.body.decode()!r} is still referenced through "
                    "h.shm.buf (e.g. by a torch.frombuffer tensor); drop it before close()"
                )
            self._buf.release()
            self._buf = None


# The Buffers this process holds open, by identity: view_array reads an owned
# backing through its owner's mapping instead of importing it.
live_buffers: "weakref.WeakValueDictionary[CanonicalIdentity, Buffer]" = weakref.WeakValueDictionary()


class Buffer:
    """An owned host backing with a canonical identity and a lifecycle.

    Create one with `create_buffer`. `tensor(...)` names a view; `close()`
    releases the backing (idempotent; BufferError while a view of the bytes is
    exported, and then nothing changes, so it can be retried). The bytes are
    freed at once when no unfinished task of this process names the buffer,
    else when the last one finishes (`free_pending`, `wait_freed()`); a submit
    naming it is refused from the close on. Only the creating process unlinks a
    POSIX shm; a forked child's copy never does. `array()` is writable in the
    creating process whatever the buffer grants: the grant is what consumers
    get."""

    def __init__(self, owner: BackingOwner):
        self._owner = owner
        self._pid = os.getpid()
        self._shm = SharedMemoryView(owner) if owner.backend == BackendKind.POSIX_SHM else None
        # The Worker that keeps it (Worker._keep), whose release_buffer alone releases it; None: no Worker's.
        self._worker: Optional["weakref.ReferenceType[Any]"] = None
        live_buffers[owner.identity] = self

    @property
    def descriptor(self) -> BufferDescriptor:
        """How any process finds this backing (what a Tensor over it carries)."""
        return self._owner.descriptor

    @property
    def identity(self) -> CanonicalIdentity:
        """The backing's 32-byte canonical identity, the same in every process and level."""
        return self._owner.identity

    @property
    def nbytes(self) -> int:
        """The backing's size in bytes: no view reaches past it."""
        return self._owner.nbytes

    @property
    def backend(self) -> BackendKind:
        """POSIX_SHM, FORK_SHM or FORK_COW: how the bytes are shared with other processes."""
        return self._owner.backend

    @property
    def access(self) -> AccessMode:
        """What the backing grants its consumers (READ, WRITE or READWRITE); a task's tags may ask
        for no more."""
        return self._owner.access

    @property
    def closed(self) -> bool:
        """Whether close() (or the Worker's release_buffer) has run: a submit naming it is refused."""
        return self._owner.closed

    @property
    def free_pending(self) -> bool:
        """Closed, and the free still waits for unfinished tasks that name it."""
        return self._owner.free_pending

    def wait_freed(self) -> None:
        """Blocks (asleep, the GIL released) until a closed buffer's bytes are
        freed; returns at once when nothing is pending."""
        self._owner.wait_freed()

    @property
    def shm(self) -> Optional[SharedMemoryView]:
        """The shm of a POSIX_SHM backing (transitional: prefer `view_array`);
        None for other backends."""
        return self._shm

    def tensor(
        self,
        shapes: Sequence[int],
        dtype: DataType,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> Tensor:
        """A view over this backing: row-major element strides by default;
        strides > 0; byte_offset in bytes, a multiple of the element size."""
        return Tensor(self._owner.descriptor, shapes, dtype, strides, byte_offset)

    def array(
        self, shapes: Sequence[int], dtype: DataType, strides: Optional[Sequence[int]] = None, byte_offset: int = 0
    ) -> np.ndarray:
        """`view_array(self.tensor(...))`."""
        return view_array(self.tensor(shapes, dtype, strides, byte_offset))

    def close(self) -> None:
        """Releases the backing: idempotent; the bytes are freed once no unfinished task names it
        (see the class). BufferError, changing nothing, while a view of the bytes is exported."""
        if self._owner.closed:
            return
        if self._shm is not None:
            self._shm._release()
        self._owner.close()
        if live_buffers.get(self._owner.identity) is self:
            del live_buffers[self._owner.identity]

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"Buffer({self._owner.descriptor!r}, {state})"


class SharedTensor(Buffer):
    """A Buffer sized for one (shape, dtype) — what `Worker.alloc_shared_tensor`
    and `Worker.share` return. `tensor()` and `array()` default to that whole
    shape. `origin` is where the tensor's bytes start in the backing (0 but for
    a shared tensor inside a larger POSIX shm object): every view's byte_offset
    counts from there."""

    def __init__(self, owner: BackingOwner, shape: Sequence[int], dtype: DataType, origin: int = 0):
        super().__init__(owner)
        self.shape = tuple(shape)
        self.dtype = dtype
        self.origin = origin

    def tensor(
        self,
        shapes: Optional[Sequence[int]] = None,
        dtype: Optional[DataType] = None,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> Tensor:
        """A view over the tensor's bytes: by default its whole (shape, dtype); `byte_offset`
        counts from `origin`. The rules are Buffer.tensor's."""
        byte_offset = check_int("SharedTensor.tensor.byte_offset", byte_offset, bits=64)
        return super().tensor(
            self.shape if shapes is None else shapes,
            self.dtype if dtype is None else dtype,
            strides,
            self.origin + byte_offset,
        )

    def array(
        self,
        shapes: Optional[Sequence[int]] = None,
        dtype: Optional[DataType] = None,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> np.ndarray:
        """`view_array(self.tensor(...))`: a zero-copy NumPy array, by default of the whole tensor."""
        return view_array(self.tensor(shapes, dtype, strides, byte_offset))


def create_buffer(
    nbytes: int,
    access: AccessMode = AccessMode.READWRITE,
    backend: BackendKind = BackendKind.POSIX_SHM,
    owner_worker_path_id: int = 0,
) -> Buffer:
    """A new owned host backing of `nbytes` bytes. POSIX_SHM (the default) is a
    named shm any process can map; FORK_SHM and FORK_COW are pre-fork regions,
    visible to children forked afterwards (FORK_COW grants READ only)."""
    nbytes = check_int("create_buffer.nbytes", nbytes, minimum=1, bits=64)
    check_type("create_buffer.access", access, AccessMode)
    check_type("create_buffer.backend", backend, BackendKind)
    owner_worker_path_id = check_int("create_buffer.owner_worker_path_id", owner_worker_path_id, bits=32)
    if backend == BackendKind.POSIX_SHM:
        return Buffer(create_posix_shm(nbytes, access, owner_worker_path_id))
    if backend == BackendKind.FORK_SHM:
        return Buffer(create_fork_shm(nbytes, access))
    if backend == BackendKind.FORK_COW:
        if access != AccessMode.READ:
            raise ValueError("FORK_COW: a copy-on-write backing grants READ only")
        return Buffer(create_fork_cow(nbytes))
    raise ValueError(f"create_buffer: {backend!r} is not a host backend")


_default_registry: list = [None, 0]


@atexit.register
def _drop_default_registry() -> None:
    """Frees this process's registry before the interpreter's teardown, which may free the extension's
    types first (nanobind then reports the registry as leaked)."""
    _default_registry[0] = None


def default_registry() -> ImportRegistry:
    """This process's host ImportRegistry (a forked child gets its own)."""
    pid = current_process_id()  # os.getpid() without its system call: this runs once per sub task
    if _default_registry[0] is None or _default_registry[1] != pid:
        _default_registry[0] = ImportRegistry()
        _default_registry[1] = pid
    registry: ImportRegistry = _default_registry[0]
    return registry


def forget_imports(identities: Sequence[CanonicalIdentity]) -> None:
    """The owner freed these backings: drop them from this process's import
    cache (a mapping a MappedArg or array still refers to stays until it goes).
    A Worker's Python children run this when the Worker's forget reaches them."""
    registry = default_registry()
    for identity in identities:
        registry.forget(identity)


def mapped_array(arg: MappedArg) -> np.ndarray:
    """A zero-copy NumPy array over a MappedArg's view (read-only when the
    MappedArg is: a READ grant, or a view the task does not write)."""
    return _array_over(arg, arg.shapes, arg.strides, arg.dtype, 0, arg.read_only)


def open_here() -> List[Buffer]:
    """Every open buffer this process created (its own or adopted memory)."""
    pid = os.getpid()
    return [b for b in list(live_buffers.values()) if not b.closed and b._pid == pid]


def base_address(buffer: Buffer) -> int:
    """The address of byte 0 of `buffer`'s backing in the process that created it."""
    return int(buffer._owner.address)


def set_worker(buffer: Buffer, worker: Any) -> None:
    """Makes `buffer` Worker `worker`'s (held weakly: a buffer does not keep its Worker alive)."""
    buffer._worker = weakref.ref(worker)


def worker_of(buffer: Buffer) -> Any:
    """The Worker `buffer` belongs to while that Worker lives; None for a buffer of none."""
    return buffer._worker() if buffer._worker is not None else None


def view_array(tensor: Tensor, registry: Optional[ImportRegistry] = None) -> np.ndarray:
    """A zero-copy NumPy array of exactly the view's bytes, with its strides.
    In the process that created the buffer it is writable whatever the grant
    (the owner fills its own bytes); elsewhere it is read-only when the backing
    grants READ. In the owner (or a forked child that inherited the owner) it
    reads through the owner's mapping; elsewhere the backing is imported
    (map-once) through `registry`, by default this process's.
    The array keeps the bytes exported: drop it before `Buffer.close()`.
    DLPack comes with it (`arr.__dlpack__()`)."""
    owner = live_buffers.get(tensor.buffer.identity)
    if owner is not None and not owner.closed and owner.descriptor == tensor.buffer:
        readonly = tensor.buffer.access == AccessMode.READ and os.getpid() != owner._pid
        return _array_over(owner._owner, tensor.shapes, tensor.strides, tensor.dtype, tensor.byte_offset, readonly)
    arg = (registry if registry is not None else default_registry()).map_arg(tensor)
    return mapped_array(arg)
