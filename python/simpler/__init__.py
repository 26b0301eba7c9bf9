"""simpler: a hierarchical task runtime whose tasks name their data with typed,
self-describing buffer handles and strided views instead of raw pointers."""

from simpler.buffer import (
    AccessMode,
    AddressSpace,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    Tensor,
    element_size,
)
from simpler.task_interface import (
    ChipStorageTaskArgs,
    ChipTensor,
    DecodedTaskArgs,
    TaskArgs,
    TensorArgType,
    read_blob,
    write_blob,
)

__all__ = [
    "AccessMode",
    "AddressSpace",
    "BackendKind",
    "BufferDescriptor",
    "CanonicalIdentity",
    "ChipStorageTaskArgs",
    "ChipTensor",
    "DataType",
    "DecodedTaskArgs",
    "TaskArgs",
    "Tensor",
    "TensorArgType",
    "element_size",
    "read_blob",
    "write_blob",
]
