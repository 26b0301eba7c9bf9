"""The Python sub-worker: what a forked sub-worker child does with a task.

The child receives the argument blob, decodes it with `read_blob` (which
validates every tensor), maps each backing once through this process's
ImportRegistry (the views the task does not write, by the engine's write mask,
read-only), and calls the registered function with a `MappedArgs`. An
exception comes back to the parent as text: its type, message and traceback.
"""

from __future__ import annotations

import traceback
from typing import Callable, List, Optional, Sequence

import numpy as np

from simpler.model.buffer import AccessMode, MappedArg, default_registry, mapped_array
from simpler.model.task_interface import read_blob

_WRITE_MASK_AT = 32  # CallConfig: bytes 32..63 are the engine's write mask


class MappedArgs:
    """A sub task's arguments in the sub-worker: one MappedArg per tensor (its
    bytes in this process, read-only for READ grants and INPUT views, plus the geometry) and the
    u64 scalars. `args[i]` is the i-th MappedArg, `args.array(i)` a zero-copy
    NumPy array over its view."""

    __slots__ = {  # each slot with its docstring
        "scalars": "The task's u64 scalars, in order.",
        "tensors": "One MappedArg per tensor of the task, in order.",
    }

    def __init__(self, tensors: Sequence[MappedArg], scalars: Sequence[int]):
        # The sub-worker passes the fresh lists map_args made; anything else is copied.
        self.tensors: List[MappedArg] = tensors if type(tensors) is list else list(tensors)
        self.scalars: List[int] = scalars if type(scalars) is list else list(scalars)

    def __len__(self) -> int:
        return len(self.tensors)

    def __getitem__(self, i: int) -> MappedArg:
        return self.tensors[i]

    def array(self, i: int) -> np.ndarray:
        """A zero-copy NumPy array over tensor `i`'s view (read-only where the task may not write)."""
        return mapped_array(self.tensors[i])

    def __repr__(self) -> str:
        return f"MappedArgs({len(self.tensors)} tensors, scalars={self.scalars})"


def make_dispatcher(callables: Sequence[Callable]) -> Callable[[int, bytes, bytes], object]:
    """The function each sub-worker child calls per task: returns None on
    success, or the failure as text."""

    def dispatch(callable_id: int, blob: bytes, config: bytes) -> Optional[str]:
        try:
            fn = callables[callable_id]
        except IndexError:
            return f"unknown sub-worker callable {callable_id}"
        tensors: Sequence[MappedArg] = ()
        try:
            # Decoded (every tensor validated) and mapped in one call. The engine's write
            # mask (CallConfig bytes 32..63): a view the task does not write is mapped
            # read-only, and a write to it fails the task.
            tensors, scalars = default_registry().map_blob(blob, config[_WRITE_MASK_AT:])
            fn(MappedArgs(tensors, scalars))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent as data
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
            return text + _read_only_note(text, blob, tensors)
        return None

    return dispatch


def _read_only_note(text: str, blob: bytes, mapped: Sequence[MappedArg]) -> str:
    """When NumPy or a memoryview refused a write to read-only memory, names
    the task's read-only arguments: their buffer and grant, and whether the
    grant or the INPUT tag made them read-only."""
    if "read-only" not in text or not mapped:
        return ""
    wire = read_blob(blob).tensors  # `mapped` is not empty: this blob decoded before
    parts = []
    for i, (t, a) in enumerate(zip(wire, mapped, strict=False)):
        if not a.read_only:
            continue
        d = t.buffer
        why = "" if d.access == AccessMode.READ else "; not written by this task (INPUT), so mapped read-only"
        parts.append(f"argument {i}: buffer {d.identity} ({d.backend_kind.name}, grants {d.access.name}{why})")
    return "\n(read-only arguments of this task: " + "; ".join(parts) + ")" if parts else ""
