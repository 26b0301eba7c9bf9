"""What a nested run receives from its parent's task: the forwarded arguments
and the scope they allow.

Forwarding is by re-export: each tensor of the parent's task reaches the nested
orchestration as a Tensor with the same descriptor (the same canonical
identity), validated by `read_blob` and re-exported through this process's
ImportRegistry, which maps nothing. Tags do not cross the blob; the engine's
masks do: a tensor the parent's task writes arrives tagged INOUT, or
OUTPUT_EXISTING when the parent's task writes it without reading it (the
write-only mask) or its grant is WRITE; a NO_DEP one (its write-only bit
without its write bit) NO_DEP; any other INPUT.

The parent ordered its tasks by the views it forwarded, so a nested run may
touch only those bytes (`ForwardedScope`): a submit naming a forwarded buffer
outside every forwarded view of it, or writing outside every view the parent's
task writes, is refused. Buffers the nested orchestration creates itself are
its own.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from simpler._core import (
    AccessMode,
    CallConfig,
    CanonicalIdentity,
    Tensor,
    TensorArgType,
    TensorOverlap,
    overlap,
    read_blob,
)
from simpler.model.buffer import default_registry
from simpler.model.task_interface import TaskArgs

_WRITING_TAGS = frozenset({TensorArgType.OUTPUT, TensorArgType.INOUT, TensorArgType.OUTPUT_EXISTING})


class ForwardedScope:
    """The views a parent's task forwarded to a nested run, by identity, and
    whether the task writes each; check() refuses a submit that reaches beyond them."""

    def __init__(self, views: Sequence[Tuple[Tensor, bool]]):
        self._views: Dict[CanonicalIdentity, List[Tuple[Tensor, bool]]] = {}
        for view, writes in views:
            self._views.setdefault(view.buffer.identity, []).append((view, writes))

    def check(self, args: TaskArgs, what: str) -> None:
        """ValueError naming the argument when `args` names bytes of a forwarded
        buffer outside the forwarded views (or writes outside the written ones)."""
        if not self._views:
            return
        for i in range(args.tensor_count):
            t = args[i]
            views = self._views.get(t.buffer.identity)
            if views is None:
                continue
            if t.buffer != views[0][0].buffer:
                raise ValueError(
                    f"{what} refused: argument {i} names buffer {t.buffer.identity} with a descriptor other than the "
                    f"one the parent's task forwarded ({t.buffer!r}, forwarded {views[0][0].buffer!r}); a nested "
                    "orchestration passes on the descriptors it received"
                )
            writes = args.tag(i) in _WRITING_TAGS
            if any((w or not writes) and overlap(v, t)[0] == TensorOverlap.COVERED for v, w in views):
                continue
            written = " written by" if writes else ""
            raise ValueError(
                f"{what} refused: argument {i} ({args.tag(i).name}) names bytes of buffer {t.buffer.identity} outside "
                f"every view of it{written} the parent's task forwarded; a nested orchestration may only touch the "
                "views its task received (the parent ordered its tasks by them)"
            )


# The scope of a task that forwarded no tensor: it restricts nothing (shared; a scope never changes).
_NOTHING_FORWARDED = ForwardedScope(())


def forwarded_args(blob: bytes, config: CallConfig) -> Tuple[TaskArgs, ForwardedScope]:
    """The parent's task arguments as this level's TaskArgs: every tensor
    validated and re-exported (same identity, nothing mapped), tagged by the
    call config's write mask; and the scope they allow."""
    decoded = read_blob(blob)
    tensors = decoded.tensors
    args = TaskArgs()
    views = []
    if tensors:  # a tensor-less task (the hot path) re-exports nothing and holds no submit
        registry = default_registry()
        for i, t in enumerate(tensors):
            view = registry.reexport(t)
            writes = config.writes(i)
            if config.no_dep(i):
                tag = TensorArgType.NO_DEP
            elif not writes:
                tag = TensorArgType.INPUT
            elif view.buffer.access == AccessMode.READWRITE and not config.writes_only(i):
                tag = TensorArgType.INOUT
            else:
                tag = TensorArgType.OUTPUT_EXISTING
            args.add_tensor(view, tag)
            views.append((view, writes))
    for s in decoded.scalars:
        args.add_scalar(s)
    return args, ForwardedScope(views) if views else _NOTHING_FORWARDED
