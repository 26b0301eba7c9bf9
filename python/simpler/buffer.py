"""Buffers and views: the wire types of the L3+ memory model.

`BufferDescriptor` says how to find a backing, `Tensor` names a strided view over
one. Both are the C++ structs of src/simpler/task_interface/buffer.h bound
directly; each constructor validates, and no function here builds one from bytes.
"""

from simpler._core import (
    AccessMode,
    AddressSpace,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    Tensor,
    element_size,
)

__all__ = [
    "AccessMode",
    "AddressSpace",
    "BackendKind",
    "BufferDescriptor",
    "CanonicalIdentity",
    "DataType",
    "Tensor",
    "element_size",
]
