"""The buffer model's own module path: `simpler.buffer` is where the memory
model (docs/explanation/memory-model.md) puts `Buffer`, `Tensor`,
`ImportRegistry`, `MappedArg` and `default_registry`. Every name here is the same object as
simpler.model.buffer's (where they are defined) and the package's own
(`simpler.buffer.Tensor is simpler.Tensor`); nothing is defined here."""

import simpler.model.buffer
from simpler.model.buffer import *  # noqa: F403 - every public name, as the layered module defines it

__all__: list[str] = []
__all__ += simpler.model.buffer.__all__
