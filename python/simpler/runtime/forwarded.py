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

from typing import Tuple

from simpler._core import CallConfig, ForwardedViews, TensorArgType, forward_task_args
from simpler.model.buffer import default_registry
from simpler.model.task_interface import TaskArgs

# ForwardedViews.refusal's kinds.
_OTHER_DESCRIPTOR = 0
_WRITING_TAGS = frozenset({TensorArgType.OUTPUT, TensorArgType.INOUT, TensorArgType.OUTPUT_EXISTING})


class ForwardedScope:
    """The views a parent's task forwarded to a nested run, and whether the task
    writes each; check() refuses a submit that reaches beyond them. The check is
    C++'s (ForwardedViews, once per submit); this words its refusal."""

    __slots__ = ("_forwarded", "_within")

    def __init__(self, views: ForwardedViews, forwarded: TaskArgs):
        self._within = views.refusal if len(views) else None
        self._forwarded = forwarded  # the forwarded arguments, to name a refusal's descriptor

    def check(self, args: TaskArgs, what: str) -> None:
        """ValueError naming the argument when `args` names bytes of a forwarded
        buffer outside the forwarded views (or writes outside the written ones)."""
        if self._within is None:
            return
        refusal = self._within(args)
        if refusal is None:
            return
        kind, i = refusal
        t = args[i]
        if kind == _OTHER_DESCRIPTOR:
            forwarded = next(
                self._forwarded[k].buffer
                for k in range(self._forwarded.tensor_count)
                if self._forwarded[k].buffer.identity == t.buffer.identity
            )
            raise ValueError(
                f"{what} refused: argument {i} names buffer {t.buffer.identity} with a descriptor other than the "
                f"one the parent's task forwarded ({t.buffer!r}, forwarded {forwarded!r}); a nested "
                "orchestration passes on the descriptors it received"
            )
        written = " written by" if args.tag(i) in _WRITING_TAGS else ""
        raise ValueError(
            f"{what} refused: argument {i} ({args.tag(i).name}) names bytes of buffer {t.buffer.identity} outside "
            f"every view of it{written} the parent's task forwarded; a nested orchestration may only touch the "
            "views its task received (the parent ordered its tasks by them)"
        )


def forwarded_args(blob: bytes, config: CallConfig) -> Tuple[TaskArgs, ForwardedScope]:
    """The parent's task arguments as this level's TaskArgs: every tensor
    validated and re-exported (same identity, nothing mapped), tagged by the
    call config's write mask; and the scope they allow."""
    args, views = forward_task_args(blob, config, default_registry())
    return args, ForwardedScope(views, args)
