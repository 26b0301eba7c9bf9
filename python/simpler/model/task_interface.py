"""Task arguments: the L3+ TaskArgs (Tensors with tags, then scalars), its argument
blob, and the chip-side ChipTensor / ChipStorageTaskArgs.

`read_blob` is the only way from bytes to Tensors, and it validates every one.
"""

from simpler._core import (
    ChipStorageTaskArgs,
    ChipTensor,
    DataType,
    DecodedTaskArgs,
    TaskArgs,
    TaskArgsBatch,
    TensorArgType,
    blob_size,
    read_blob,
    write_blob,
)
from simpler.model.buffer import Tensor

__all__ = [
    "ChipStorageTaskArgs",
    "ChipTensor",
    "DataType",
    "DecodedTaskArgs",
    "TaskArgs",
    "TaskArgsBatch",
    "Tensor",
    "TensorArgType",
    "blob_size",
    "read_blob",
    "write_blob",
]
