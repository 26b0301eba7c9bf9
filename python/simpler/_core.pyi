"""simpler's C++ core: wire types, argument blobs and the runtime engine"""

from collections.abc import Iterator, Sequence
import enum
from typing import overload


class DataType(enum.Enum):
    """Element type of a view (values frozen by the ABI)"""
    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    INT16 = 3
    INT8 = 4
    UINT8 = 5
    BFLOAT16 = 6
    INT64 = 7
    UINT64 = 8
    UINT16 = 9
    UINT32 = 10
    BOOL = 11
    FP8E4M3FN = 12
    FP8E8M0 = 13
    FP4E2M1 = 14
    FLOAT64 = 15

def element_size(dtype: DataType) -> int:
    """Element size in bytes of a DataType."""

class AddressSpace(enum.Enum):
    """Where a backing's bytes live: HOST memory, or DEVICE memory of one chip."""
    HOST = 0
    DEVICE = 1

class AccessMode(enum.Enum):
    """What a backing grants"""
    READ = 0
    WRITE = 1
    READWRITE = 2

class BackendKind(enum.Enum):
    """
    How a backing's bytes are found (values frozen by the ABI): POSIX_SHM, FORK_SHM, FORK_COW, VMM_WINDOW, REMOTE_SIDECAR, DEVICE_MALLOC.
    """
    FORK_SHM = 0
    POSIX_SHM = 1
    VMM_WINDOW = 2
    REMOTE_SIDECAR = 3
    DEVICE_MALLOC = 4
    FORK_COW = 5

class TensorArgType(enum.Enum):
    """Per-argument tag driving dependency inference"""
    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4

class CanonicalIdentity:
    """The 32-byte identity of one backing; == and hash read owner_instance_id, buffer_id and generation only."""
    def __init__(self, owner_instance_id: bytes, buffer_id: int, generation: int) -> None: ...
    @property
    def owner_instance_id(self) -> bytes:
        """The owner nonce: 8 bytes naming the process instance that made the backing."""
    @property
    def buffer_id(self) -> int:
        """The buffer's number within its owner (>= 1)."""
    @property
    def generation(self) -> int:
        """The buffer's generation (non-zero): a freed and re-made buffer is a new one."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __str__(self) -> str: ...

class BufferDescriptor:
    """How to find a backing: identity, backend and its body, size and grant."""
    def __init__(self, identity: CanonicalIdentity, backend_kind: BackendKind, access: AccessMode, nbytes: int, body: bytes = b'', address_space: AddressSpace | None = None, owner_worker_path_id: int = 0) -> None:
        """
        Fills the fields, zeroes the rest and validates (ValueError names the field and rule). address_space defaults to the backend's (DEVICE for VMM_WINDOW / DEVICE_MALLOC).
        """
    @staticmethod
    def for_address(identity: CanonicalIdentity, backend_kind: BackendKind, access: AccessMode, nbytes: int, base: int, owner_worker_path_id: int = 0) -> BufferDescriptor:
        """
        A descriptor for an address-bearing backend (FORK_SHM, FORK_COW, VMM_WINDOW, DEVICE_MALLOC): base stored as 8 bytes little-endian.
        """
    @property
    def magic(self) -> int:
        """The descriptor's magic word (docs/internals/abi.md): a decoder refuses any other."""
    @property
    def address_space(self) -> AddressSpace:
        """HOST or DEVICE: where the bytes live."""
    @property
    def access(self) -> AccessMode:
        """What the backing grants: READ, WRITE or READWRITE."""
    @property
    def backend_kind(self) -> BackendKind:
        """How to find the bytes: the backend the body is of."""
    @property
    def identity(self) -> CanonicalIdentity:
        """The backing's canonical identity."""
    @property
    def nbytes(self) -> int:
        """The backing's size in bytes: no view reaches past it."""
    @property
    def owner_worker_path_id(self) -> int:
        """The interned path of the Worker that owns the backing (0: none)."""
    @property
    def body_len(self) -> int:
        """How many bytes of the body are used."""
    @property
    def body(self) -> bytes:
        """The backend's body: a POSIX shm name, or an 8-byte base address."""
    @property
    def address(self) -> int | None:
        """The base of an address-bearing backend; None for POSIX_SHM and REMOTE_SIDECAR."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class Tensor:
    """The L3+ task argument: a buffer descriptor plus a strided view; carries no address."""
    def __init__(self, buffer: BufferDescriptor, shapes: Sequence[int], dtype: DataType, strides: Sequence[int] | None = None, byte_offset: int = 0) -> None:
        """
        strides are element strides (row-major when None); byte_offset is in bytes. Validates: ValueError names the field and rule.
        """
    @property
    def buffer(self) -> BufferDescriptor:
        """The descriptor of the backing the view is of."""
    @property
    def byte_offset(self) -> int:
        """Where the view starts in the backing, in bytes (a multiple of the element size)."""
    @property
    def ndims(self) -> int:
        """The view's number of dimensions."""
    @property
    def shapes(self) -> tuple:
        """The view's shape."""
    @property
    def strides(self) -> tuple:
        """The view's strides, in elements (every stride > 0)."""
    @property
    def dtype(self) -> DataType:
        """The view's element type."""
    @property
    def extent_bytes(self) -> int:
        """Bytes from the view's first element to one past its last."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class ChipTensor:
    """A task argument as the chip runtime receives it: resolved address + view."""
    def __init__(self, addr: int, size: int, shapes: Sequence[int], dtype: DataType, strides: Sequence[int] | None = None, start_offset: int = 0, address_space: AddressSpace = AddressSpace.HOST) -> None:
        """start_offset is in elements."""
    @property
    def addr(self) -> int:
        """The resolved address of the buffer in the chip's process."""
    @property
    def size(self) -> int:
        """The buffer's size in bytes."""
    @property
    def start_offset(self) -> int:
        """Where the view starts, in elements from addr."""
    @property
    def ndims(self) -> int:
        """The view's number of dimensions."""
    @property
    def shapes(self) -> tuple:
        """The view's shape."""
    @property
    def strides(self) -> tuple:
        """The view's strides, in elements."""
    @property
    def dtype(self) -> DataType:
        """The view's element type."""
    @property
    def address_space(self) -> AddressSpace:
        """HOST or DEVICE: where addr points."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class ChipStorageTaskArgs:
    """The L2 entry arguments: up to 256 ChipTensors, then up to 128 u64 scalars."""
    def __init__(self) -> None: ...
    def add_tensor(self, tensor: ChipTensor) -> None:
        """Appends a ChipTensor (at most 256, all before the scalars)."""
    def add_scalar(self, value: int) -> None:
        """Appends a u64 scalar (at most 128)."""
    @property
    def tensor_count(self) -> int:
        """How many ChipTensors it holds."""
    @property
    def scalar_count(self) -> int:
        """How many scalars it holds."""
    def tensor(self, index: int) -> ChipTensor:
        """ChipTensor `index`; IndexError past the count."""
    def scalar(self, index: int) -> int:
        """Scalar `index`; IndexError past the count."""

class TaskArgs:
    """The L3+ argument list: Tensors with their tags, then u64 scalars. len() and [i] address the tensors."""
    def __init__(self) -> None: ...
    def add_tensor(self, tensor: Tensor, tag: TensorArgType = TensorArgType.INPUT) -> None:
        """Validates the tensor and that its buffer grants what the tag needs; tensors before scalars."""
    def add_scalar(self, value: int) -> None:
        """A u64: an int in [0, 2**64) (a NumPy integer too; not a bool or a float)."""
    def set_tag(self, index: int, tag: TensorArgType) -> None:
        """Changes tensor `index`'s tag (checked against its grant as add_tensor checks it)."""
    def tag(self, index: int) -> TensorArgType:
        """Tensor `index`'s tag."""
    def scalar(self, index: int) -> int:
        """Scalar `index`."""
    def check_access(self) -> None:
        """Re-checks access ⊆ granted for every argument (what submit runs)."""
    @property
    def tensor_count(self) -> int:
        """How many tensors it holds."""
    @property
    def scalar_count(self) -> int:
        """How many scalars it holds."""
    @property
    def tags(self) -> list[TensorArgType]:
        """Every tensor's tag, in order."""
    @property
    def scalars(self) -> list[int]:
        """Every scalar, in order."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tensor: ...
    def __repr__(self) -> str: ...

class TaskArgsBatch:
    """
    The argument lists of a batch of tasks, held in C++: a tiling's tasks (tiled(); each built when it is submitted or read, never all held at once), then the TaskArgs append()ed; submitted by Orchestrator.submit_many / submit_sub_many. len() and [i] (a copy).
    """
    def __init__(self) -> None: ...
    @staticmethod
    def tiled(operands: Sequence[tuple[Tensor, TensorArgType, Sequence[int] | None]]) -> TaskArgsBatch:
        """
        One task per tile: operands are (tensor, tag, tile_shape); each tiled operand is cut into tiles of tile_shape (the last tile of a dimension is what remains), every tiled operand must have the same grid, and task k (row-major over the grid) takes tile k of each, in operand order; tile_shape None passes the whole tensor to every task. ValueError names the operand and the rule.
        """
    def append(self, args: TaskArgs) -> None:
        """Appends a copy of `args`."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> TaskArgs:
        """A copy of task i's TaskArgs."""
    def __repr__(self) -> str: ...

class DecodedTaskArgs:
    """The tensors and scalars read back from an argument blob."""
    @property
    def tensors(self) -> list[Tensor]:
        """The blob's tensors, each validated, in order."""
    @property
    def scalars(self) -> list[int]:
        """The blob's u64 scalars, in order."""

def write_blob(args: TaskArgs) -> bytes:
    """Serializes TaskArgs as an argument blob (tags do not cross)."""

def read_blob(blob: bytes) -> DecodedTaskArgs:
    """Decodes an argument blob, validating the header and every tensor; all or nothing (ValueError)."""

def blob_size(tensor_count: int, scalar_count: int) -> int:
    """The size in bytes of the argument blob of `tensor_count` tensors and `scalar_count` scalars."""

class CallConfig:
    """
    The 64 bytes of call configuration a task member carries to its child (docs/internals/abi.md): block_dim, the most core threads a chip orchestration tiles for (0: all); zero_copy, run on host arguments in place instead of staging them; checked, stage between guard bytes and fail the task on a write outside the views it may write (wins over zero_copy).
    """
    def __init__(self, block_dim: int = 0, zero_copy: bool = False, checked: bool = False) -> None: ...
    @property
    def block_dim(self) -> int:
        """The most core threads the chip orchestration tiles for (0: all of them)."""
    @block_dim.setter
    def block_dim(self, arg: int, /) -> None: ...
    @property
    def zero_copy(self) -> bool:
        """Run the kernels on the host bytes in place instead of staging them to device memory."""
    @zero_copy.setter
    def zero_copy(self, arg: bool, /) -> None: ...
    @property
    def checked(self) -> bool:
        """
        Stage the task between guard bytes and fail it on a write outside the views it may write (wins over zero_copy).
        """
    @checked.setter
    def checked(self, arg: bool, /) -> None: ...
    def to_bytes(self) -> bytes:
        """The 64 bytes as the task carries them (docs/internals/abi.md)."""
    def writes(self, index: int) -> bool:
        """Whether the engine's write mask says the task writes tensor `index` (False past the mask's 256 bits)."""
    def writes_only(self, index: int) -> bool:
        """
        Whether the task writes tensor `index` without reading it (OUTPUT / OUTPUT_EXISTING: the engine's write-only mask; False past its 192 bits).
        """
    def no_dep(self, index: int) -> bool:
        """
        Whether tensor `index`'s tag was NO_DEP (its write-only bit without its write bit; False past the write-only mask's 192 bits).
        """
    @staticmethod
    def from_bytes(data: bytes) -> CallConfig:
        """The CallConfig whose 64 bytes to_bytes() wrote; ValueError for data of another length."""
    def __eq__(self, other: object, /) -> bool: ...
    def __repr__(self) -> str: ...

class TensorOverlap(enum.Enum):
    """Do two views of one backing share bytes? Only NONE drops an edge"""
    NONE = 0
    PARTIAL = 1
    COVERED = 2

class OverlapReason(enum.Enum):
    """Why an overlap answer is PARTIAL: SHARED_BYTES (proven) or the fallback that applied"""
    NONE = 0
    SHARED_BYTES = 1
    DIFFERENT_DTYPE = 2
    DIFFERENT_RANK = 3
    DIFFERENT_STRIDES = 4
    NOT_ROW_MAJOR = 5
    OFF_LATTICE = 6
    WRAPS_ROW = 7
    WORK_CAP = 8

OVERLAP_DEFAULT_WORK_CAP: int = 4096

def overlap(probe: Tensor, entry: Tensor, exact_strides: bool = True, work_cap: int = 4096) -> tuple[TensorOverlap, OverlapReason]:
    """
    Overlap of two views: (NONE | PARTIAL | COVERED, reason). COVERED: the probe contains every byte of the entry. Views of different backings are NONE. exact_strides=False stops at the row-major model.
    """

HOST_SCOPE: int = -1

WINDOW_SCOPE: int = -2

class EdgeKind(enum.Enum):
    """The rule that made an edge"""
    READ_AFTER_WRITE = 0
    WRITE_AFTER_WRITE = 1
    WRITE_AFTER_READ = 2

class EdgeExplanation:
    """Why one edge exists: which arguments, which overlap answer"""
    @property
    def predecessor(self) -> int:
        """The task that must finish first."""
    @property
    def successor(self) -> int:
        """The task that waits for it."""
    @property
    def kind(self) -> EdgeKind:
        """The rule: READ_AFTER_WRITE, WRITE_AFTER_WRITE or WRITE_AFTER_READ."""
    @property
    def successor_member(self) -> int:
        """The successor's member (of a group) whose argument made the edge."""
    @property
    def successor_arg(self) -> int:
        """The index of that argument among the member's tensors."""
    @property
    def predecessor_member(self) -> int:
        """The predecessor's member whose argument made the edge."""
    @property
    def predecessor_arg(self) -> int:
        """The index of that argument among the member's tensors."""
    @property
    def successor_tag(self) -> TensorArgType:
        """The successor argument's tag."""
    @property
    def predecessor_tag(self) -> TensorArgType:
        """The predecessor argument's tag."""
    @property
    def identity(self) -> CanonicalIdentity:
        """The backing both arguments view."""
    @property
    def scope(self) -> int:
        """Where the backing lives: HOST_SCOPE, WINDOW_SCOPE, or a chip's index (its device memory)."""
    @property
    def overlap(self) -> TensorOverlap:
        """What overlap() answered for the two views: PARTIAL or COVERED (never NONE)."""
    @property
    def reason(self) -> OverlapReason:
        """Why a PARTIAL answer is PARTIAL (OverlapReason); NONE otherwise."""
    @property
    def proven(self) -> bool:
        """True when the edge rests on a proven shared byte; False for a fallback PARTIAL"""
    def __repr__(self) -> str: ...

class DependencyTracker:
    """Infers a task's predecessors from its tensor arguments and tags"""
    def __init__(self, exact_strides: bool = True, work_cap: int = 4096, record_explanations: bool = True) -> None: ...
    def submit(self, task: int, tensors: Sequence[Tensor], tags: Sequence[TensorArgType], target_chip: int = -1) -> list[int]:
        """Submits a one-member task; returns its predecessors. ValueError (nothing recorded) on refusal."""
    def submit_group(self, task: int, members: Sequence[tuple[Sequence[Tensor], Sequence[TensorArgType], int]]) -> list[int]:
        """Submits one node of several members, each (tensors, tags, target_chip); returns its predecessors."""
    def complete(self, task: int) -> None:
        """Retires a task: its entries leave the tracker. IndexError when it is not live."""
    def explain(self, pred: int, succ: int) -> EdgeExplanation | None:
        """Why pred -> succ exists, or None when there is no such edge"""
    def edges_into(self, succ: int) -> list[EdgeExplanation]:
        """Every recorded edge into task `succ`, with its explanation."""
    def is_live(self, task: int) -> bool:
        """Whether `task` was submitted and not yet completed."""
    @property
    def live_tasks(self) -> int:
        """How many tasks are submitted and not completed."""
    @property
    def live_entries(self) -> int:
        """How many argument entries the live tasks hold in the index."""
    @property
    def live_keys(self) -> int:
        """How many backings (by identity and scope) the index holds entries of."""

def intern_owner_path(path: str) -> int:
    """The owner_worker_path_id of a Worker's tree path ('L4/L3[0]') in this process, interned on first use."""

def owner_path(descriptor: BufferDescriptor) -> str:
    """Where a descriptor's buffer was made ('L4/L3[0]/chip 1') when this process made it, else '<path#N>'."""

class ImportRefused(ValueError):
    """An ImportRegistry refused a descriptor; the message starts with the ImportRefusal name."""

class ImportRefusal(enum.Enum):
    """Why an ImportRegistry refused a descriptor"""
    NONE = 0
    INVALID_DESCRIPTOR = 1
    REGISTRY_CLOSED = 2
    DESCRIPTOR_MISMATCH = 3
    STALE_GENERATION = 4
    SHM_MISSING = 5
    SHM_TOO_SMALL = 6
    NOT_A_FORK_REGION = 7
    DEVICE_ON_HOST = 8
    DEVICE_WRONG_CHIP = 9
    DEVICE_OWNER_UNKNOWN = 10
    REMOTE_UNSUPPORTED = 11
    OS_ERROR = 12
    WINDOW_OUTSIDE = 13
    WINDOW_NOT_MEMBER = 14

class BackingOwner:
    """
    The owner of one host backing. Supports the buffer protocol over all of its bytes (writable: the owner fills its own bytes); close() raises BufferError while any export is alive.
    """
    @property
    def descriptor(self) -> BufferDescriptor:
        """How any process finds this backing."""
    @property
    def identity(self) -> CanonicalIdentity:
        """The backing's canonical identity."""
    @property
    def nbytes(self) -> int:
        """The backing's size in bytes."""
    @property
    def backend(self) -> BackendKind:
        """POSIX_SHM, FORK_SHM or FORK_COW."""
    @property
    def access(self) -> AccessMode:
        """What the backing grants its consumers."""
    @property
    def closed(self) -> bool:
        """Whether close() has run."""
    @property
    def free_pending(self) -> bool:
        """Closed, and the free still waits for unfinished tasks that name the buffer."""
    @property
    def export_count(self) -> int:
        """How many buffer-protocol views of the bytes are alive (close() waits for 0)."""
    @property
    def shm_name(self) -> str | None:
        """The POSIX shm name (no leading '/'); None for other backends."""
    @property
    def address(self) -> int:
        """Owner-side address of byte 0 (0 once closed)."""
    def close(self) -> None:
        """
        Releases the backing: idempotent; BufferError while exports are alive (nothing changes, retry later). Only the creating process unlinks, and only once no unfinished task of this process names the buffer (at once when none does; free_pending says whether it still waits).
        """
    def wait_freed(self) -> None:
        """Blocks (the GIL released, asleep) until the free of a closed buffer has run; at once when none is pending."""

def create_posix_shm(nbytes: int, access: AccessMode = AccessMode.READWRITE, owner_worker_path_id: int = 0) -> BackingOwner:
    """A POSIX shm backing (O_CREAT|O_EXCL, mode 0600, named from its identity)."""

def shm_tracker_pid() -> int:
    """
    The pid of this process's /dev/shm tracker (it unlinks this process's POSIX shm objects when the process dies), or -1 before the first POSIX shm backing.
    """

def create_fork_shm(nbytes: int, access: AccessMode = AccessMode.READWRITE, owner_worker_path_id: int = 0) -> BackingOwner:
    """A pre-fork MAP_SHARED backing: children forked afterwards see and write it at the same address."""

def create_fork_cow(nbytes: int) -> BackingOwner:
    """A pre-fork private (copy-on-write) backing; grants READ only."""

def adopt_fork_memory(backend: BackendKind, address: int, nbytes: int, access: AccessMode, owner_worker_path_id: int = 0) -> BackingOwner:
    """
    An owner over memory this process did not get from the runtime (FORK_SHM: a MAP_SHARED range; FORK_COW: a private range, READ only). Never unmaps it: the caller keeps the memory alive until the free has run. Use Worker.share, which checks what the memory is.
    """

def adopt_posix_shm(name: str, object_address: int, nbytes: int, access: AccessMode, owner_worker_path_id: int = 0) -> BackingOwner:
    """
    An owner naming the user's POSIX shm object `name`, mapped in this process from its byte 0 at object_address. Never unmaps or unlinks it. Use Worker.share, which checks the mapping.
    """

def check_identity_live(identity: CanonicalIdentity) -> str:
    """Empty when this process's owner incarnation holds id live; otherwise why not."""

class MappedArg:
    """
    One mapped argument for a Python sub-worker: a buffer of exactly the view's bytes (read-only when the grant is READ) plus the geometry.
    """
    @property
    def address(self) -> int:
        """The address in this process of the view's first byte."""
    @property
    def view_nbytes(self) -> int:
        """The view's extent in bytes, from its first element to one past its last."""
    @property
    def read_only(self) -> bool:
        """Whether the bytes are mapped read-only (a READ grant, or a view the task does not write)."""
    @property
    def byte_offset(self) -> int:
        """The view's offset in its backing, in bytes."""
    @property
    def backing_nbytes(self) -> int:
        """The size of the whole backing, in bytes."""
    @property
    def ndims(self) -> int:
        """The view's number of dimensions."""
    @property
    def shapes(self) -> tuple:
        """The view's shape."""
    @property
    def strides(self) -> tuple:
        """The view's strides, in elements."""
    @property
    def dtype(self) -> DataType:
        """The view's element type."""
    @property
    def identity(self) -> CanonicalIdentity:
        """The canonical identity of the backing the view is of."""
    @property
    def buffer(self) -> object:
        """A memoryview of exactly the view's bytes (for torch.frombuffer / numpy.frombuffer)."""
    def numpy(self) -> object:
        """A zero-copy NumPy array of the view with its strides (simpler.model.buffer.mapped_array)."""

class ImportRegistry:
    """
    The consumer side: resolves descriptors (map-once per identity) for a host endpoint or, with chip_index, for that chip.
    """
    def __init__(self, chip_index: int | None = None) -> None: ...
    def import_backing(self, descriptor: BufferDescriptor) -> int:
        """The backing's base address in this process (mapping it on first receipt)."""
    def materialize_args(self, tensors: Sequence[Tensor], scalars: Sequence[int] = []) -> ChipStorageTaskArgs:
        """
        The chip's form of a task's arguments: each tensor resolved to its address in this process (mapping each backing on first receipt), then the scalars.
        """
    def map_arg(self, tensor: Tensor, writable: bool = True) -> MappedArg:
        """The view's bytes in this process; read-only (and mapped so) for a READ grant or writable=False."""
    def map_args(self, tensors: Sequence[Tensor], scalars: Sequence[int] = [], write_mask: bytes = ...) -> tuple:
        """
        (list of MappedArg, list of scalars): the MappedArgs form. write_mask: CallConfig's (bit i: tensor i is written; the others are mapped read-only); empty: every tensor as its grant allows.
        """
    def map_blob(self, blob: bytes, write_mask: bytes = ...) -> tuple:
        """map_args of read_blob(blob), the tensors staying in C++."""
    def reexport(self, tensor: Tensor) -> Tensor:
        """Forwarding: the same Tensor (source identity kept), validated; maps nothing."""
    def unregister(self, identity: CanonicalIdentity) -> bool:
        """
        Drops the cache entry of `identity` and unmaps it; that generation is refused (STALE_GENERATION) from then on. Refused while a MappedArg of it is alive.
        """
    def forget(self, identity: CanonicalIdentity) -> bool:
        """
        The owner freed the backing: drops the entry and refuses its generation from now on; a mapping a MappedArg still refers to stays mapped until the last one goes. False when it was not imported.
        """
    def identities(self) -> list[CanonicalIdentity]:
        """The identities the cache holds now."""
    @property
    def kept_for_exports(self) -> int:
        """Forgotten mappings kept alive by MappedArgs that still refer to them."""
    def close(self) -> None:
        """Unmaps every cached backing and refuses every later import (REGISTRY_CLOSED)."""
    @property
    def closed(self) -> bool:
        """Whether close() has run."""
    def __len__(self) -> int: ...
    @property
    def stats(self) -> dict:
        """Counts since creation: receipts, hits (already mapped), maps, unmaps, reexports, refusals."""

class ForwardedViews:
    """The views a parent's task forwarded to a nested run, and whether it writes each."""
    def __len__(self) -> int: ...
    def refusal(self, args: TaskArgs) -> tuple[int, int] | None:
        """
        None when `args` stays within the forwarded views; else (kind, argument): kind 0, a forwarded buffer named by another descriptor; kind 1, bytes outside every forwarded view of it (or written outside every written one).
        """

def forward_task_args(blob: bytes, config: CallConfig, registry: ImportRegistry) -> tuple[TaskArgs, ForwardedViews]:
    """
    The parent's task blob as this level's TaskArgs (each tensor validated and re-exported through `registry`, tagged by the call config's masks) and the ForwardedViews they allow.
    """

class StagingMode(enum.Enum):
    """
    How a chip reaches host arguments: STAGE copies them into device memory and back; ZERO_COPY runs on them in place; CHECKED stages them between guard bytes and fails a run that wrote outside the views it may write.
    """
    STAGE = 0
    ZERO_COPY = 1
    CHECKED = 2

class DeviceKind(enum.Enum):
    """
    What a chip drives: SIMULATED (the chip process itself), OPENCL (an OpenCL device through the ICD loader, opened in the chip process) or CUDA (an NVIDIA GPU through the CUDA driver: find_devices lists them, no chip runs on one yet).
    """
    SIMULATED = 0
    OPENCL = 1
    CUDA = 2

class DeviceChoice:
    """
    Which device a chip drives: its kind, a part of the platform's name (any case; empty: every platform) and which of the devices found (index modulo their count; a Worker sets it to the chip's index).
    """
    def __init__(self) -> None: ...
    @property
    def kind(self) -> DeviceKind: ...
    @kind.setter
    def kind(self, arg: DeviceKind, /) -> None: ...
    @property
    def platform(self) -> str: ...
    @platform.setter
    def platform(self, arg: str, /) -> None: ...
    @property
    def index(self) -> int: ...
    @index.setter
    def index(self, arg: int, /) -> None: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __repr__(self) -> str: ...

class DeviceFacts:
    """
    One device: its kind, platform, name, the driver's version text, memory in bytes, compute units, the kernels it runs at once (0: one per chip core thread), and whether kernels may use host memory in place (zero-copy runs).
    """
    @property
    def kind(self) -> DeviceKind:
        """The DeviceKind: SIMULATED, OPENCL or CUDA."""
    @property
    def platform(self) -> str:
        """Who provides the device ('simpler' for the simulated one)."""
    @property
    def name(self) -> str:
        """The device's own name."""
    @property
    def version(self) -> str:
        """
        What the driver says of itself ('OpenCL 3.0 PoCL ...'; 'CUDA 13.0 driver, compute capability 9.0'; '' for the simulated device).
        """
    @property
    def uuid(self) -> str:
        """
        A CUDA device's UUID ('GPU-8f3a...', as nvidia-smi writes it; device_platform may name its beginning); '' for other kinds.
        """
    @property
    def memory_bytes(self) -> int:
        """The chip's device heap, in bytes."""
    @property
    def compute_units(self) -> int:
        """CL_DEVICE_MAX_COMPUTE_UNITS; a CUDA device's multiprocessors (SMs); a simulated chip's core threads."""
    @property
    def concurrent_kernels(self) -> int:
        """Kernels the device runs at once, each over all its compute units (0: one per chip core thread)."""
    @property
    def unified_host_memory(self) -> bool:
        """Whether kernels may read and write host memory in place (zero-copy runs)."""
    def __repr__(self) -> str: ...

def find_devices(kind: DeviceKind, platform: str = '') -> list[DeviceFacts]:
    """
    The devices of `kind` whose platform's name contains `platform`, in the order chips take them, asked in a throwaway child process. RuntimeError naming what is missing (no OpenCL loader, platform or device).
    """

def opencl_kernel_names(source: str) -> list[str]:
    """The names of the __kernel functions an OpenCL C source defines, in order (read without a compiler)."""

def chip_cache_dir(sub: str = '') -> str:
    """
    Where built chip code is cached (folder `sub` of it, made when absent): $SIMPLER_CACHE_DIR, else $XDG_CACHE_HOME/simpler, else ~/.cache/simpler, else $XDG_RUNTIME_DIR/simpler, else /tmp/simpler-cache-<uid>, each used only when this user alone may write it (else, said on stderr, /tmp/simpler-cache-<uid>). RuntimeError when no private folder can be made.
    """

def read_private_file(path: str) -> bytes | None:
    """
    The bytes of the file at `path` when it is a regular file (a link is not followed) owned by this user that neither group nor others may write; else None.
    """

def write_private_file(path: str, data: bytes) -> None:
    """
    Writes `data` to `path` through a temporary made by mkstemp beside it (mode 0600), renamed over `path`: a link planted at that name is replaced, never followed. RuntimeError naming the step that failed.
    """

def set_blas_candidate(path: str) -> None:
    """
    Registers the BLAS a chip loads unless SIMPLER_BLAS names one (chip/blas_library.h); the package registers the scipy-openblas32 wheel's at import.
    """

def blas_library() -> tuple[str | None, str | None]:
    """
    The BLAS the standard kernels call in this process, loading it on the first call: (the library as loaded, or None for the portable loops; why the one named did not load, or None).
    """

def opencl_built() -> bool:
    """True when this build drives OpenCL devices (the OpenCL headers were found when it was built)."""

def cuda_built() -> bool:
    """
    True when this build knows CUDA devices (the CUDA headers were found when it was built): find_devices(DeviceKind.CUDA) lists them; no chip runs on one yet.
    """

def set_nvrtc_candidate(path: str) -> None:
    """
    Registers the NVRTC a CUDA chip loads unless SIMPLER_NVRTC_LIBRARY names one (chip/cuda_driver.h); the package registers the nvidia-cuda-nvrtc wheel's at import when it is installed.
    """

def nvrtc_version() -> tuple[int, int]:
    """
    NVRTC's (major, minor), loading it in this process (NVRTC keeps no device state). RuntimeError saying what to install when there is none, or that this build knows no CUDA.
    """

class RuntimeConfig:
    """A chip's task runtime: core_threads in [1, 256], ring_slots in [2, 1048576]."""
    def __init__(self) -> None: ...
    @property
    def core_threads(self) -> int: ...
    @core_threads.setter
    def core_threads(self, arg: int, /) -> None: ...
    @property
    def ring_slots(self) -> int: ...
    @ring_slots.setter
    def ring_slots(self, arg: int, /) -> None: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __repr__(self) -> str: ...

class ChipServiceConfig:
    """
    A chip's options: arena_bytes of device memory for staged copies and run temporaries, its runtime, its staging mode, the libraries it loads, the chip orchestration each callable id names, and the device it drives.
    """
    def __init__(self) -> None: ...
    @property
    def arena_bytes(self) -> int: ...
    @arena_bytes.setter
    def arena_bytes(self, arg: int, /) -> None: ...
    @property
    def runtime(self) -> RuntimeConfig: ...
    @runtime.setter
    def runtime(self, arg: RuntimeConfig, /) -> None: ...
    @property
    def staging(self) -> StagingMode: ...
    @staging.setter
    def staging(self, arg: StagingMode, /) -> None: ...
    @property
    def libraries(self) -> list[str]: ...
    @libraries.setter
    def libraries(self, arg: Sequence[str], /) -> None: ...
    @property
    def orchestrations(self) -> list[str]: ...
    @orchestrations.setter
    def orchestrations(self, arg: Sequence[str], /) -> None: ...
    @property
    def device(self) -> DeviceChoice: ...
    @device.setter
    def device(self, arg: DeviceChoice, /) -> None: ...
    def validate(self) -> None:
        """ValueError naming the field and the rule it breaks."""
    def __eq__(self, other: object, /) -> bool: ...

def build_chip_library(source_path: str, flags: Sequence[str] | None = None, compiler: str = '', cache_dir: str = '') -> tuple[str, str, bool]:
    """
    Compiles one C++ file of chip kernels / orchestrations into a shared library, cached by content hash; returns (path, key, cache_hit). RuntimeError carries the compiler's diagnostics.
    """

def chip_orchestration_names(libraries: Sequence[str]) -> list[str]:
    """
    The chip orchestrations a chip offers with the standard set plus these libraries loaded in order (ValueError / RuntimeError as loading them on a chip would raise).
    """

def wait_status_channel(channel: int, seen: int, timeout: float | None = None) -> int | None:
    """
    Waits (the GIL released, holding no Python object) until the status of the Worker whose EngineWorker.status_channel is `channel` moved past serial `seen`, or timeout seconds; returns the serial then, or None once that Worker closed.
    """

def close_status_channel(channel: int) -> None:
    """
    Closes a status channel early (at interpreter exit, so a thread waiting on it returns before the interpreter goes): wait_status_channel returns None from then on.
    """

def current_process_id() -> int:
    """
    This process's id without a system call (os.getpid() is one: ~150 ns): cached, and refreshed in every child forked through fork(), the children a Worker forks in C++ included.
    """

def chip_install_payload(orchestration: str, library: str) -> bytes:
    """
    The install payload of a chip callable: chip orchestration `orchestration` of shared library `library` ('': the standard set).
    """

class TaskKind(enum.Enum):
    """
    What a callable is run as: NEXT_LEVEL (a chip orchestration, or a next-level Worker's orchestration function) or SUB (a Python sub-worker callable).
    """
    NEXT_LEVEL = 0
    SUB = 1

class ChildKind(enum.Enum):
    """The kinds of a Worker's children: CHIP, SUB_WORKER, WORKER (a next-level Worker)."""
    CHIP = 0
    SUB_WORKER = 1
    WORKER = 2

class ChildRef:
    """
    Which child of a Worker: its kind and its index among the Worker's children of that kind. name() is the spelling every error, trace lane and status line uses.
    """
    def __init__(self, kind: ChildKind, index: int) -> None: ...
    @property
    def kind(self) -> ChildKind:
        """CHIP, SUB_WORKER or WORKER."""
    @property
    def index(self) -> int:
        """Its index among the Worker's children of that kind."""
    def name(self) -> str:
        """'chip 0', 'sub-worker 1', 'worker 2'."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class TaskHandle:
    """
    What a submit returns: the task's id within its Worker and the run it was submitted in (runs count Worker.run() and Worker.submit() calls from 0).
    """
    def __init__(self, id: int, run: int) -> None: ...
    @property
    def id(self) -> int:
        """The task's id within its Worker, counting up across its runs."""
    @property
    def run(self) -> int:
        """The run it was submitted in (the Worker's runs count from 0)."""
    def name(self) -> str:
        """'task 3 of run 1'."""
    def __eq__(self, other: object, /) -> bool: ...
    def __lt__(self, arg: TaskHandle, /) -> bool:
        """Submit order (ids count up across runs)."""
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class FieldRefused(ValueError):
    """
    A config struct refused one field's value: .field is its dotted path ("WorkerConfig.chip_lane.chip.arena_bytes"), .rule what it broke ("must be > 0 (got 0)"); the message is "<field>: <rule>".
    """
    field: str
    rule: str

class ChipLaneConfig:
    """The Worker's simulated chips: the chip each child builds."""
    def __init__(self) -> None: ...
    @property
    def chip(self) -> ChipServiceConfig: ...
    @chip.setter
    def chip(self, arg: ChipServiceConfig, /) -> None: ...
    def __eq__(self, other: object, /) -> bool: ...

class WorkerConfig:
    """
    A Worker's options, each default the C++ initializer's. spin and task_timeout are seconds; validate() raises ValueError naming the field and the rule.
    """
    def __init__(self) -> None: ...
    @property
    def level(self) -> int:
        """3: a host (chips below); 4 to 8: a pod (Workers below)."""
    @level.setter
    def level(self, arg: int, /) -> None: ...
    @property
    def num_chips(self) -> int: ...
    @num_chips.setter
    def num_chips(self, arg: int, /) -> None: ...
    @property
    def num_sub_workers(self) -> int: ...
    @num_sub_workers.setter
    def num_sub_workers(self, arg: int, /) -> None: ...
    @property
    def num_workers(self) -> int:
        """Next-level Worker children (a level-4 Worker's L3s)."""
    @num_workers.setter
    def num_workers(self, arg: int, /) -> None: ...
    @property
    def worker_callable_names(self) -> list[str]: ...
    @worker_callable_names.setter
    def worker_callable_names(self, arg: Sequence[str], /) -> None: ...
    @property
    def blob_capacity(self) -> int:
        """Bytes of each mailbox's argument blob."""
    @blob_capacity.setter
    def blob_capacity(self, arg: int, /) -> None: ...
    @property
    def spin(self) -> float | None:
        """
        Every waiter's spin budget in seconds: None adapts (up to 25 us), 0 never spins, 0 < s <= 1 spins s seconds.
        """
    @spin.setter
    def spin(self, spin: float | None) -> None: ...
    @property
    def task_timeout(self) -> float | None:
        """
        Seconds a task may run (at least 0.001, rounded up to whole milliseconds); None: no limit. 0, less than 0.001, NaN and infinity are refused.
        """
    @task_timeout.setter
    def task_timeout(self, task_timeout: float | None) -> None: ...
    @property
    def close_grace(self) -> float:
        """Seconds close() waits for a child before it kills it."""
    @close_grace.setter
    def close_grace(self, arg: float, /) -> None: ...
    @property
    def chip_lane(self) -> ChipLaneConfig: ...
    @chip_lane.setter
    def chip_lane(self, arg: ChipLaneConfig, /) -> None: ...
    @property
    def device_memory_bytes(self) -> int:
        """Per chip, for alloc_child_tensor."""
    @device_memory_bytes.setter
    def device_memory_bytes(self, arg: int, /) -> None: ...
    @property
    def window_heap_bytes(self) -> int:
        """Per chip, the shared heap allocate_domain carves windows from."""
    @window_heap_bytes.setter
    def window_heap_bytes(self, arg: int, /) -> None: ...
    @property
    def record_edges(self) -> bool: ...
    @record_edges.setter
    def record_edges(self, arg: bool, /) -> None: ...
    @property
    def sub_callable_names(self) -> list[str]: ...
    @sub_callable_names.setter
    def sub_callable_names(self, arg: Sequence[str], /) -> None: ...
    @property
    def trace(self) -> bool: ...
    @trace.setter
    def trace(self, arg: bool, /) -> None: ...
    @property
    def trace_capacity(self) -> int: ...
    @trace_capacity.setter
    def trace_capacity(self, arg: int, /) -> None: ...
    @property
    def edge_log_capacity(self) -> int:
        """Edges take_edge_log keeps between calls (record_edges); later ones are counted as dropped."""
    @edge_log_capacity.setter
    def edge_log_capacity(self, arg: int, /) -> None: ...
    @property
    def max_unfinished(self) -> int:
        """A submit waits while this many tasks of the Worker are unfinished (0: no limit)."""
    @max_unfinished.setter
    def max_unfinished(self, arg: int, /) -> None: ...
    @property
    def chip_conditions(self) -> bool:
        """
        A chip task whose producers run on other chips goes to its chip at once and waits there for them (its task_timeout counts from when they are collected); False (the default): it waits in this process until they finish.
        """
    @chip_conditions.setter
    def chip_conditions(self, arg: bool, /) -> None: ...
    @property
    def path(self) -> str:
        """
        The Worker's place in its tree ('L4/L3[0]'); its chips' device memory carries '<path>/chip i' as its owner path.
        """
    @path.setter
    def path(self, arg: str, /) -> None: ...
    @property
    def global_window_chips(self) -> list[int]:
        """
        Level 4: the chips of each local next-level child; one window heap of window_heap_bytes per (child, chip) is mapped before the forks, for allocate_global_domain.
        """
    @global_window_chips.setter
    def global_window_chips(self, arg: Sequence[int], /) -> None: ...
    @property
    def global_window_child_names(self) -> list[str]:
        """Level 4: the name of each child in global_window_chips ('L3[0]'), for messages."""
    @global_window_child_names.setter
    def global_window_child_names(self, arg: Sequence[str], /) -> None: ...
    @property
    def global_window_devices(self) -> list[DeviceKind]:
        """
        Level 4: the DeviceKind each child in global_window_chips drives (empty: all simulated); allocate_global_domain refuses a member on a child whose chips drive a device.
        """
    @global_window_devices.setter
    def global_window_devices(self, arg: Sequence[DeviceKind], /) -> None: ...
    def inherit_global_windows(self, parent: EngineWorker, first_slot: int) -> None:
        """
        A level-3 child, in its process right after the fork: its chips reach the parent's global windows, chip i as member slot first_slot + i.
        """
    def validate(self) -> None:
        """ValueError naming the field and the rule it breaks."""
    def __eq__(self, other: object, /) -> bool:
        """Every option equal (the C++ handlers and hooks are not options)."""

class FailedTask:
    """
    One Worker's part of a run's failure: the first task that failed or was not run (when has_task), the child it ran on, the cause (code, text) and how many tasks needing it were not run.
    """
    @property
    def level(self) -> int:
        """The level of the Worker whose run failed."""
    @property
    def has_task(self) -> bool:
        """False when no one task failed (code RAISED, NOT_STARTED, CLOSED or UNKNOWN_CALLABLE)."""
    @property
    def task(self) -> int:
        """The task's id within its Worker (0 when has_task is False)."""
    @property
    def run(self) -> int:
        """The run it was submitted in (the Worker's runs count from 0)."""
    @property
    def sub(self) -> bool:
        """A sub-worker task."""
    @property
    def callable_id(self) -> int:
        """The id of the callable it named (its handle's id)."""
    @property
    def callable(self) -> str:
        """The callable's registered name ('' when it has none)."""
    @property
    def member(self) -> int:
        """Which member of the task (0 but in a group)."""
    @property
    def child_kind(self) -> str:
        """'chip', 'sub-worker' or 'worker' (a next-level Worker)."""
    @property
    def child_index(self) -> int | None:
        """Its index among the Worker's children of that kind; None when it was not run before a child was chosen."""
    @property
    def code(self) -> str:
        """
        The cause: a TaskError name (TASK_FAILED, BAD_ARGUMENTS, UNKNOWN_CALLABLE, CHILD_DIED, TIMED_OUT, PROTOCOL, SKIPPED), NOT_RUN, NOT_DISPATCHED, FAILED_BELOW, RAISED, NOT_STARTED or CLOSED.
        """
    @property
    def text(self) -> str:
        """What happened, in the words of the level where it happened (a traceback, a kernel's message, a signal)."""
    @property
    def not_run(self) -> int:
        """How many tasks of the run were not run because they needed what it failed to produce."""
    @property
    def cause(self) -> FailedTask | None:
        """The task of another run whose failure kept this one from running; None otherwise."""
    def task_text(self) -> str:
        """'task 3 of run 1 (callable 'name', member 0)'."""
    def hop(self) -> str:
        """The child in a failure path: 'chip 1', 'sub-worker 0', 'L3[2]'."""
    def __repr__(self) -> str: ...

class FailureReport:
    """
    Why a run failed: levels[0] is the Worker whose run failed, levels[i + 1] the failure inside levels[i]'s next-level Worker.
    """
    @property
    def levels(self) -> list[FailedTask]:
        """One FailedTask per Worker, from the one whose run failed down to where it happened."""
    def render(self) -> str:
        """The sentence a RunError says (without the path from the top)."""
    def path(self) -> list[str]:
        """The hops from levels[0]'s child down to where it happened."""
    def encode(self, max_bytes: int = 4095) -> str:
        """
        The report as the text a next-level Worker's failed task answers with (at most max_bytes bytes; the longest texts are shortened to fit).
        """
    @staticmethod
    def of_worker(level: int, code: str, text: str) -> FailureReport:
        """
        The report of a level-`level` Worker's run that failed before any task did: its orchestration raised (RAISED), the Worker did not start (NOT_STARTED), or the parent named an orchestration it does not have (UNKNOWN_CALLABLE).
        """
    @staticmethod
    def decode(text: str) -> FailureReport:
        """encode()'s text as a report; ValueError naming the field and the rule."""
    def __repr__(self) -> str: ...

class EngineRunError(RuntimeError):
    """
    The engine's RunError: a run failed; .report is its FailureReport (simpler.RunError, which the Worker raises, is made from it).
    """
    report: FailureReport

class TracePhase(enum.Enum):
    SUBMIT = 0
    RUN = 1

class TraceEvent:
    """
    One timeline event (steady-clock ns = time.monotonic_ns()): SUBMIT when the engine accepted a task; RUN from publishing one member to its child's mailbox to collecting its result.
    """
    @property
    def phase(self) -> TracePhase: ...
    @property
    def kind(self) -> TaskKind: ...
    @property
    def ok(self) -> bool: ...
    @property
    def member(self) -> int: ...
    @property
    def child(self) -> ChildRef: ...
    @property
    def members(self) -> int: ...
    @property
    def task(self) -> TaskHandle: ...
    @property
    def callable(self) -> int: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def error(self) -> str: ...
    @property
    def waits_on(self) -> list[int]:
        """
        RUN: the ids of the producers on other chips (tasks of the same run) this member waited for on its own chip; else empty.
        """
    def __repr__(self) -> str: ...

class EdgeLog:
    """
    What EngineWorker.take_edge_log hands over: the edges kept (at most WorkerConfig.edge_log_capacity) and how many more were inferred.
    """
    @property
    def edges(self) -> list[EdgeExplanation]:
        """The EdgeExplanations kept, in submit order."""
    @property
    def dropped(self) -> int:
        """Edges inferred after the capacity was reached, not kept."""

class ChildStatus:
    """
    What a Worker says of one child (Worker.child_status): lost or usable, why, and what a next-level Worker child reported lost below it.
    """
    @property
    def child(self) -> ChildRef:
        """The child (a ChildRef)."""
    @property
    def lost(self) -> bool:
        """Whether it is lost for good."""
    @property
    def why(self) -> str:
        """How it was lost ('' while it is usable)."""
    @property
    def below_lost(self) -> int:
        """A usable next-level Worker child: how many children it reported lost below it."""
    @property
    def below(self) -> str:
        """... and which ('chip 1: lost (...)'; '; ' between them)."""
    def __str__(self) -> str:
        """The line people read ('chip 1: lost (...)')."""
    def __repr__(self) -> str: ...

class EngineWorker:
    """
    The C++ Worker: forked children fed through mailboxes by whichever thread drives them (submit(), wait(), or a background thread between them).
    """
    def __init__(self, config: WorkerConfig, chip_dispatch: object | None = None, sub_dispatch: object | None = None, worker_start: object | None = None, remote: RemoteChildren | None = None, sub_install: object | None = None) -> None:
        """
        Validates config (ValueError) and builds the Worker; nothing runs before init(). chip_dispatch: a Python handler for chip tasks (tests); None runs the simulated chips, whose callable ids index config.chip_lane.chip.orchestrations. sub_dispatch: the handler each sub-worker child calls. worker_start(index) -> (dispatch, close): called in next-level Worker child `index` right after its fork; it starts that child's Worker, dispatch runs each task there, close() runs when the child is told to stop. remote: the last next-level children live in other MPI ranks (RemoteChildren). sub_install(callable_id, payload) -> None or why: each sub-worker child's handler of install messages (begin_install).
        """
    def init(self) -> None:
        """Forks every child (chips, then sub-workers), then starts the threads."""
    def submit(self, kind: TaskKind, callable: int, members: Sequence[tuple[TaskArgs, int | None]], config: bytes) -> TaskHandle:
        """
        Publishes a task of (TaskArgs, worker) members (worker None: a sub task); ValueError on refusal, nothing recorded.
        """
    def submit_one(self, kind: TaskKind, callable: int, args: TaskArgs, worker: int | None, config: bytes) -> TaskHandle:
        """submit() of one member, without building a list (the hot path of submit_next_level / submit_sub)."""
    def submit_many(self, kind: TaskKind, callable: int, args: TaskArgsBatch | list[TaskArgs], workers: int | list[int] | None, config: bytes) -> tuple[TaskHandles, int, str]:
        """
        N one-member tasks in one call (Worker::submit_many): workers None (sub tasks), one index for all, or a list (one per task). Returns (the handles, -1, '') or, when a task is refused, (no handles, its index, the engine's reason): every task is checked before any is recorded. The GIL is held: the TaskArgs are Python objects another thread could change.
        """
    def wait(self, timeout: float | None = None) -> bool:
        """
        Waits (spin, then futex) until every task has finished and returns True; EngineRunError (a RuntimeError) carries the first failure's report. With a timeout (seconds) returns False when tasks are still unfinished then.
        """
    @overload
    def cancel_run(self, why: str) -> str:
        """
        Ends the run early: tasks not yet started never run (one waiting on a chip's lane is withdrawn from it); those a child has begun finish there and the next wait() waits for them. Returns what it did, in words.
        """
    @overload
    def cancel_run(self, run: int, why: str) -> str:
        """cancel_run(why) for run `run` only: its tasks not yet started never run (nor what needs them)."""
    def end_run(self, collected: bool) -> int:
        """
        Ends the run being submitted and returns its number; collected: take_finished_runs() reports it, else wait_run() does.
        """
    def wait_run(self, run: int, timeout: float | None = None) -> bool:
        """
        Waits until run `run` has finished, forgets it and returns True; EngineRunError carries its first failure. With a timeout (seconds) returns False while it has not finished.
        """
    def take_finished_runs(self, timeout: float | None = None) -> tuple[list[tuple[int, FailureReport | None]], bool]:
        """
        ([(run, failure)], closed): the collected runs that finished (failure None for success, else its FailureReport), each forgotten; waits for one until the timeout. Once closed: every collected run left, and closed True.
        """
    def begin_install(self, kind: ChildKind, callable: int, name: str, payload: bytes) -> int:
        """
        Sends callable `callable` (the next id of its kind's table, named `name` in errors) to every child of `kind` as an install message carrying `payload`; returns the ticket wait_install takes. ValueError for another id, WORKER or a message the mailbox cannot hold.
        """
    def wait_install(self, ticket: int, timeout: float | None = None) -> list[tuple[ChildRef, str]] | None:
        """
        Waits until every child the install went to has answered: the (child, why) of each refusal (a child that died with it on it among them); None when the timeout (seconds) passed first. RuntimeError when close() ended the wait.
        """
    def abandon_install(self, ticket: int) -> None:
        """Stops tracking an install whose waiter gave up (the children still install it)."""
    def forget(self, identities: Sequence[CanonicalIdentity]) -> None:
        """
        Sends every lane a forget of these identities (their owner freed them); a nested Worker passes on the forgets its parent sends it this way.
        """
    def room(self) -> int:
        """
        How many tasks may be submitted now: WorkerConfig.max_unfinished less the unfinished ones (2**64 - 1 without a limit).
        """
    def await_room(self) -> None:
        """
        Waits, the GIL released, until room() > 0; RuntimeError when close() ends the wait. A submit waits so itself, the GIL held: the Orchestrator calls this first so the program's other threads run meanwhile.
        """
    def close(self) -> None: ...
    @property
    def initialized(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def alloc_device(self, chip: int, nbytes: int, access: AccessMode = AccessMode.READWRITE) -> BufferDescriptor:
        """DEVICE_MALLOC memory on one chip: its descriptor (the body is the device pointer)."""
    def release_device(self, identity: CanonicalIdentity) -> None:
        """Refuses the block at submit from now on; frees it once every earlier task has finished."""
    def device_owner(self, identity: CanonicalIdentity) -> int | None:
        """The chip a device block or window buffer lives on, or None."""
    def allocate_domain(self, name: str, workers: Sequence[int], window_size: int, buffers: Sequence[tuple[str, int]]) -> dict:
        """
        A communication domain: {'id', 'bases' (by rank), 'offsets' (by buffer), 'buffers' (by rank, by buffer: VMM_WINDOW descriptors)}. ValueError for a bad request, RuntimeError when the window heaps have no room; a refusal allocates nothing. A name whose released domain still holds its windows waits until they are freed (the tasks submitted before the release have finished).
        """
    def allocate_global_domain(self, name: str, slots: Sequence[int], window_size: int, buffers: Sequence[tuple[str, int]]) -> dict:
        """As allocate_domain, over member slots of the level-4 Worker's global windows."""
    def release_global_domain(self, id: int) -> None:
        """As release_domain, for a global domain."""
    def global_window_stats(self) -> dict:
        """The global windows (level 4): capacity and bytes in use over every member slot, live windows and domains."""
    def release_domain(self, id: int) -> None:
        """
        Refuses the domain's buffers at submit from now on; frees its windows once every earlier task has finished.
        """
    def device_stats(self, chip: int) -> dict: ...
    def take_edge_log(self) -> EdgeLog:
        """
        The edges inferred since the last call, with their explanations (record_edges=True), and how many were not kept (edge_log_capacity); clears them.
        """
    def child_status(self) -> list[str]:
        """One line per child: child_states() as text."""
    def child_states(self) -> list[ChildStatus]:
        """One ChildStatus per child, lane by lane."""
    @property
    def status_channel(self) -> int:
        """
        The id of the channel wait_status_channel() waits on: it moves when a child is lost here or below a next-level child, and closes with the Worker.
        """
    @property
    def tracing(self) -> bool: ...
    def trace_events(self) -> list[TraceEvent]:
        """The timeline so far (empty unless trace=True); members still in flight are not in it yet."""
    def trace_dropped(self) -> int:
        """Events not stored because the trace_capacity was reached."""
    def trace_clear(self) -> None:
        """Forgets the stored events and the dropped count."""
    def progress(self) -> dict:
        """
        What has been submitted and finished, and per child what it finished and whether a task runs on it now: {'submitted', 'unfinished', 'lost', 'children': [{'name', 'done', 'running', 'lost'}]}.
        """
    @property
    def lost_count(self) -> int:
        """Children lost since init() (cheap: no lock)."""
    def child_pids(self) -> list[int]: ...
    def device_facts(self, chip: int) -> DeviceFacts:
        """
        The DeviceFacts of the device chip `chip` opened, as the chip tells it (waits while it starts). IndexError for no such chip; RuntimeError when it could not start or was lost first.
        """

class TaskHandles(Sequence[TaskHandle]):
    """
    The handles of a batch (what submit_many / submit_sub_many return): a read-only sequence of TaskHandle, one made only when asked for. len(), [i] (negative from the end; IndexError past either end), [a:b:c] (a TaskHandles), iteration, `in`, index(), count(); list(batch) is every handle in submit order. Equal to a TaskHandles, list or tuple of the same handles in the same order.
    """
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, i: int) -> TaskHandle: ...
    @overload
    def __getitem__(self, s: slice) -> TaskHandles: ...
    def __iter__(self) -> Iterator[TaskHandle]: ...
    def __contains__(self, value: object, /) -> bool: ...
    def index(self, value: object, start: int = 0, stop: int | None = None, /) -> int:
        """The position of handle `value` (within [start, stop)); ValueError when it is not there."""
    def count(self, value: object, /) -> int:
        """How many times handle `value` is in the batch (0 or 1)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __repr__(self) -> str: ...
    __hash__: None = None

def remote_available() -> bool:
    """Whether this build has the MPI transport for remote Workers."""

def set_mpi_shim_candidate(path: str) -> None:
    """
    Registers the MPI shim (libsimpler_mpi.so) this process loads unless SIMPLER_MPI_SHIM names one; the package registers its installed copy at import.
    """

def mpi_library() -> str:
    """
    Loads MPI in this process (once), without starting it: the shim and the MPI it runs, or RuntimeError naming the library that did not load, why, where the shim was looked for and how to get MPI.
    """

def remote_start(heartbeat_timeout: float) -> tuple[int, int]:
    """
    Starts MPI in this process once (MPI_THREAD_MULTIPLE) and the heartbeats; returns (rank, size). A watched rank silent for heartbeat_timeout seconds is lost.
    """

def remote_finalize() -> None:
    """Stops the heartbeats and finalizes MPI (once; MPI cannot start again in this process)."""

def remote_started() -> bool: ...

def remote_payload_bytes(rank: int) -> tuple[int, int]:
    """(sent, received): the tensor bytes this process moved to and from `rank`."""

def remote_dismiss(rank: int) -> None:
    """Tells a rank that waits for its HELLO that it is not needed (it exits)."""

def remote_lost(rank: int) -> str:
    """Why `rank` is lost; '' while it is not."""

class RemoteChildren:
    """
    The remote L3 children of a Worker: (rank, path, hello) each, the last next-level children of its EngineWorker, started by init() (HELLO, then READY).
    """
    def __init__(self, children: Sequence[tuple[int, str, str]], first_index: int, start_timeout: float, close_timeout: float) -> None: ...
    @property
    def count(self) -> int: ...

class RemoteServer:
    """A remote L3 Worker's end of its link to the L4 (rank 0)."""
    def __init__(self) -> None: ...
    def await_hello(self) -> str:
        """The L4's HELLO text ('' when it sent SHUTDOWN instead: this rank is not needed)."""
    def ready(self, why: str) -> None:
        """Answers the HELLO: '' started, else why not."""
    def serve(self, run: object, forget: object) -> int:
        """
        Serves TASK frames with run(callable, blob, config) -> None | FailureReport | failure text, FORGET frames with forget(identities), until SHUTDOWN (0) or the L4 is lost (1, ended_why says why).
        """
    def bye(self) -> None:
        """Closes every host copy and says goodbye to the L4."""
    @property
    def ended_why(self) -> str: ...
    @property
    def shadow_count(self) -> int: ...
