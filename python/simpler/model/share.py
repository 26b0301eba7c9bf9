"""Bring your own memory: `Worker.share(obj)` names the bytes of a NumPy array or
a torch tensor as a backing, without copying them.

Which backing the bytes become is decided by how they are mapped (read from
/proc/self/maps, simpler.model.memory_map) and by whether the Worker's children
exist yet:

    before init()  MAP_SHARED bytes         FORK_SHM (children inherit them at
                                             the same address; writes reach the owner)
                   private bytes            FORK_COW (children read them as of
                                             init(); READ only)
    after init()   bytes in a named POSIX   POSIX_SHM naming that object (each
                   shm object (/dev/shm)    consumer maps it once)
                   anything else            refused, naming the remedy

The adopted Buffer (an `AdoptedTensor`) never frees the bytes: they belong to
the user's object, which it keeps alive until the bytes are no longer named —
the buffer is open, or closed with its free still waiting for tasks. Memory
that is already a buffer's (or part of one) is refused: two identities over the
same bytes would hide dependencies from each other. `copy=True` copies into a
new buffer of the Worker instead.

torch is never imported here: a torch tensor is recognised only when the
caller's process has imported torch already.
"""

from __future__ import annotations

import ctypes
import math
import sys
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from simpler._core import AccessMode, BackendKind, BackingOwner, adopt_fork_memory, adopt_posix_shm, intern_owner_path
from simpler.model.arg_checks import check_bool, check_type
from simpler.model.buffer import NUMPY_DTYPES, DataType, SharedTensor, base_address, element_size, open_here
from simpler.model.memory_map import MemoryRange, describe_range, keys_overlap, mappings

__all__ = ["AdoptedTensor"]

# A NumPy array's dtype names its DataType when the two are the same type (float32 is FLOAT32);
# the dtypes buffer.numpy_dtype only borrows for their size (uint16 for BFLOAT16) name none.
_NUMPY_TO_DTYPE = {nd: d for d, nd in NUMPY_DTYPES.items() if nd.name == d.name.lower()}

_TORCH_TO_DTYPE = {
    "float32": DataType.FLOAT32,
    "float64": DataType.FLOAT64,
    "float16": DataType.FLOAT16,
    "bfloat16": DataType.BFLOAT16,
    "int32": DataType.INT32,
    "int16": DataType.INT16,
    "int8": DataType.INT8,
    "uint8": DataType.UINT8,
    "int64": DataType.INT64,
    "uint64": DataType.UINT64,
    "uint16": DataType.UINT16,
    "uint32": DataType.UINT32,
    "bool": DataType.BOOL,
    "float8_e4m3fn": DataType.FP8E4M3FN,
    "float8_e8m0fnu": DataType.FP8E8M0,
}

# Adopted owners whose bytes may still be named, with the user's object they
# belong to and where the bytes are (MemoryRange.key). An entry stays until its
# owner is closed and its free has run (swept at each share() and each close
# of an adopted buffer): holding the owner keeps it from being destroyed
# unclosed, holding the object keeps the bytes alive.
_adopted: List[Tuple[BackingOwner, Any, Tuple[object, ...]]] = []


def _sweep() -> None:
    _adopted[:] = [e for e in _adopted if not e[0].closed or e[0].free_pending]


class AdoptedTensor(SharedTensor):
    """A SharedTensor over memory the user owns (what `Worker.share` returns).
    `source` is the array or tensor whose bytes it names; the task's writes
    land in it. Closing it never frees those bytes: it stops naming them, and
    the object is let go once no unfinished task names the buffer."""

    def __init__(self, owner: BackingOwner, shape: Tuple[int, ...], dtype: DataType, origin: int, source: Any):
        super().__init__(owner, shape, dtype, origin)
        self.source = source

    def close(self) -> None:
        """Stops naming the memory (Buffer.close); the memory itself is never freed here, and
        `source` is let go once no unfinished task names the buffer."""
        super().close()
        _sweep()


class _Source:
    """The bytes of a NumPy array or a torch tensor: address, size, shape, dtype."""

    def __init__(self, obj: Any):
        torch = sys.modules.get("torch")
        if isinstance(obj, np.ndarray):
            self.kind = "NumPy array"
            dtype = _NUMPY_TO_DTYPE.get(obj.dtype)
            if dtype is None:
                raise ValueError(
                    f"Worker.share: a NumPy array of dtype {obj.dtype} has no DataType; supported: "
                    f"{', '.join(sorted(str(d) for d in _NUMPY_TO_DTYPE))}"
                )
            contiguous = obj.flags.c_contiguous
            writeable = bool(obj.flags.writeable)
            address = obj.__array_interface__["data"][0]
            strides = tuple(s // obj.itemsize for s in obj.strides)
        elif torch is not None and isinstance(obj, torch.Tensor):
            self.kind = "torch tensor"
            if obj.device.type != "cpu":
                raise ValueError(f"Worker.share: the tensor is on {obj.device}; only host (cpu) memory can be shared")
            if obj.layout != torch.strided:
                raise ValueError(f"Worker.share: a {obj.layout} tensor has no flat bytes to share; pass a dense one")
            name = str(obj.dtype).removeprefix("torch.")
            dtype = _TORCH_TO_DTYPE.get(name)
            if dtype is None:
                raise ValueError(
                    f"Worker.share: a torch tensor of dtype {obj.dtype} has no DataType; supported: "
                    f"{', '.join(sorted(_TORCH_TO_DTYPE))}"
                )
            contiguous = obj.is_contiguous()
            writeable = True  # a torch tensor has no read-only flag
            address = obj.data_ptr()
            strides = tuple(obj.stride())
        else:
            raise TypeError(
                f"Worker.share: expected a NumPy array or a torch tensor, got {type(obj).__name__} "
                "(for other memory, view it as one first: numpy.frombuffer(obj, dtype))"
            )
        self.obj = obj
        # False for a NumPy array whose WRITEABLE flag is off: no task may write through it.
        self.writeable = writeable
        self.shape: Tuple[int, ...] = tuple(int(n) for n in obj.shape)
        self.dtype = dtype
        self.nbytes = math.prod(self.shape) * element_size(dtype)
        self.address = int(address)
        if self.nbytes == 0:
            raise ValueError(f"Worker.share: the {self.kind} of shape {self.shape} has no bytes")
        if not contiguous:
            raise ValueError(
                f"Worker.share: the {self.kind} of shape {self.shape} is not contiguous (element strides {strides}); "
                "share the contiguous array it views and name the strided view with "
                "buffer.tensor(shapes, dtype, strides=..., byte_offset=...), or share a contiguous copy"
            )


def _refuse_shared_twice(where: MemoryRange, kind: str, maps: list) -> None:
    """ValueError when the bytes are (partly) a live buffer's of this process,
    or an adopted buffer's whose free still waits."""
    for buffer in open_here():
        origin = getattr(buffer, "origin", 0)
        start = base_address(buffer) + origin
        try:
            key = describe_range(start, buffer.nbytes - origin, maps).key
        except ValueError:
            continue
        if keys_overlap(key, where.key):
            raise ValueError(
                f"Worker.share: the {kind}'s bytes are already (part of) buffer {buffer.identity}; "
                "name views of that buffer instead of sharing its bytes again"
            )
    for owner, _obj, key in _adopted:
        if owner.closed and keys_overlap(key, where.key):
            raise ValueError(
                f"Worker.share: the {kind}'s bytes belong to released buffer {owner.identity}, whose "
                "free waits for the tasks that name it; wait for it (release_buffer(b, wait=True)) "
                "before sharing them again"
            )


# A Worker's alloc_shared_tensor(shape, dtype, access).
_Alloc = Callable[[Sequence[int], DataType, AccessMode], SharedTensor]


def _copy(alloc: _Alloc, src: _Source, access: AccessMode) -> SharedTensor:
    t: SharedTensor = alloc(src.shape, src.dtype, access)
    ctypes.memmove(base_address(t), src.address, src.nbytes)
    return t


def share(
    obj: Any, access: Optional[AccessMode], copy: bool, *, owner_path: str, initialized: bool, alloc: _Alloc
) -> SharedTensor:
    """Worker.share (see its docstring) for the Worker at `owner_path`, which
    init() has started or not (`initialized`); `alloc` is its
    alloc_shared_tensor (for copy=True). The caller keeps what it returns."""
    _sweep()
    if access is not None:
        check_type("Worker.share.access", access, AccessMode)
    copy = check_bool("Worker.share.copy", copy)
    src = _Source(obj)
    if copy:
        return _copy(alloc, src, AccessMode.READWRITE if access is None else access)
    if not src.writeable:
        if access not in (None, AccessMode.READ):
            raise ValueError(
                f"Worker.share: the {src.kind}'s WRITEABLE flag is off, so its buffer grants READ only, "
                f"not {access.name}; share a writable array (arr.setflags(write=True) where its owner "
                "allows it), or pass copy=True for a copy tasks can write"
            )
        access = AccessMode.READ
    maps = mappings()
    where = describe_range(src.address, src.nbytes, maps)
    if not where.writable:
        raise ValueError(
            f"Worker.share: the {src.kind}'s memory is mapped read-only in this process; its owner "
            "could not fill it (share a writable copy, or pass copy=True)"
        )
    _refuse_shared_twice(where, src.kind, maps)
    path_id = intern_owner_path(owner_path)
    origin = 0
    if not initialized:
        if where.shared:
            owner = adopt_fork_memory(
                BackendKind.FORK_SHM,
                src.address,
                src.nbytes,
                AccessMode.READWRITE if access is None else access,
                path_id,
            )
        else:
            if access not in (None, AccessMode.READ):
                raise ValueError(
                    f"Worker.share: the {src.kind}'s memory is private (not MAP_SHARED): shared before init() it is "
                    f"FORK_COW, which children read as of the fork and cannot write, so it grants READ only, not "
                    f"{access.name}; for a buffer children write, put it in shared memory first (torch: "
                    "tensor.share_memory_(); NumPy: an array over multiprocessing.shared_memory.SharedMemory), or "
                    "use Worker.alloc_shared_tensor"
                )
            owner = adopt_fork_memory(BackendKind.FORK_COW, src.address, src.nbytes, AccessMode.READ, path_id)
    else:
        name = where.shm_name
        if name is None:
            raise ValueError(_after_init_refusal(src, where))
        if not 1 <= len(name.encode()) <= 32 or not name.isprintable() or not name.isascii():
            raise ValueError(
                f"Worker.share: the {src.kind} lies in shm object {name!r}, whose name does not fit a "
                "descriptor (1-32 printable ASCII bytes); pass copy=True, or name the object shorter"
            )
        # The object's byte 0 must be mapped in this process: the owner's bytes (and views) count from it.
        origin = where.file_offset
        try:
            object_range = describe_range(src.address - origin, origin + src.nbytes, maps)
        except ValueError:
            object_range = None
        if object_range is None or object_range.key[:3] != where.key[:3] or object_range.file_offset != 0:
            raise ValueError(
                f"Worker.share: the {src.kind} lies at byte {origin} of shm object {name!r}, whose "
                "start this process does not map; map the object from its byte 0"
            )
        owner = adopt_posix_shm(
            name, src.address - origin, origin + src.nbytes, AccessMode.READWRITE if access is None else access, path_id
        )
    t = AdoptedTensor(owner, src.shape, src.dtype, origin, src.obj)
    _adopted.append((owner, src.obj, where.key))
    return t


def _after_init_refusal(src: _Source, where: MemoryRange) -> str:
    lead = f"Worker.share: after init() the {src.kind}'s bytes must be in a named POSIX shm object, which each child "
    if not where.shared:
        return (
            lead + "maps by name; these are private memory, which the children (forked at init()) cannot see. "
            "Share it before init() (it becomes FORK_COW, read-only for children), allocate shared memory "
            "(torch: set torch.multiprocessing.set_sharing_strategy('file_system'), then tensor.share_memory_(); "
            "NumPy: an array over multiprocessing.shared_memory.SharedMemory), or pass copy=True to copy it into "
            "a new buffer"
        )
    if where.deleted:
        what = "anonymous shared memory (mmap(-1, n))" if where.path == "/dev/zero" else repr(where.path)
        return (
            lead + f"maps by name; these are in {what}, which has no name any more (torch's default "
            "'file_descriptor' sharing strategy and anonymous mmaps unlink it), so no child can open it. Share "
            "it before init() (FORK_SHM), call torch.multiprocessing.set_sharing_strategy('file_system') before "
            "share_memory_(), or pass copy=True"
        )
    return (
        lead + f"maps by name; these are in {where.path!r}, which is not under /dev/shm. Share it before init() "
        "(FORK_SHM), or pass copy=True"
    )
