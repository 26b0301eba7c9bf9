"""The task arguments' own module path: `simpler.task_interface` is where the
memory model (docs/explanation/memory-model.md) puts `TaskArgs`, the tags and the chip-side
`ChipTensor`, and it re-exports the wire `Tensor` (the type
`TaskArgs.add_tensor` takes; `simpler.task_interface.Tensor is
simpler.buffer.Tensor`). `read_args_from_blob` is the memory model's name of
the blob decoder, `read_blob`. Every name here is the same object as
simpler.model.task_interface's (where they are gathered); nothing is defined
here."""

import simpler.model.task_interface
from simpler.model.task_interface import *  # noqa: F403 - every public name, as the layered module gathers them
from simpler.model.task_interface import read_blob

read_args_from_blob = read_blob

__all__ = ["read_args_from_blob"]
__all__ += simpler.model.task_interface.__all__
