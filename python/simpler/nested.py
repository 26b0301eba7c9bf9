"""Nested Workers: the child side of a next-level Worker lane.

A level-N Worker (N >= 4) takes level-(N-1) Workers as its next-level children
(Worker.add_worker). Its init() forks each child, and in the child process
`start_child` starts that child's own Worker (which forks its chips and
sub-workers) and returns the `NextLevelServer` that runs every task the parent
sends: an orchestration function `fn(orch, args, cfg)` registered on the top
Worker, run as a whole `Worker.run` of the child.

Forwarding is by re-export: each tensor of the parent's task reaches `fn` as a
Tensor with the same descriptor (the same canonical identity), validated by
`read_blob` and re-exported through this process's ImportRegistry, which maps
nothing. Tags do not cross the blob; the engine's masks do: a tensor the
parent's task writes arrives tagged INOUT, or OUTPUT_EXISTING when the parent's
task writes it without reading it (the write-only mask) or its grant is WRITE;
a NO_DEP one (its write-only bit without its write bit) NO_DEP; any other
INPUT.

The parent ordered its tasks by the views it forwarded, so a nested run may
touch only those bytes (`ForwardedScope`): a submit naming a forwarded buffer
outside every forwarded view of it, or writing outside every view the parent's
task writes, is refused. Buffers the nested orchestration creates itself are
its own.

Failures travel up with their path: a child's failure text starts with the path
from that child down to where the failure happened (`L3[0] → chip 1: ...`), and
the top Worker's run() error starts with the whole path (`L4 → L3[0] → chip 1:`).
"""

from __future__ import annotations

import re
import traceback
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

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
from simpler.buffer import default_registry, forget_imports
from simpler.task_interface import TaskArgs

if TYPE_CHECKING:
    from simpler.worker import Worker

_WRITING_TAGS = frozenset({TensorArgType.OUTPUT, TensorArgType.INOUT, TensorArgType.OUTPUT_EXISTING})

# One step of a failure path: a nested Worker, a chip or a sub-worker.
_STEP = r"(?:L\d+\[\d+\]|chip \d+|sub-worker \d+)"
_PATH = re.compile(rf"{_STEP}(?: → {_STEP})*")
# The engine's failure text (Worker::describe_failure_locked): where the first failed task ran.
_FAILURE = re.compile(r"(?:sub )?task \d+ of run \d+ \(callable .*?, member \d+\) on (chip|sub-worker|worker) (\d+) "
                      r"failed: (?:[A-Z_]+: )?(.*)", re.S)


def child_name(level: int, index: int) -> str:
    """What a failure path calls next-level Worker `index` of a level-`level` Worker: 'L3[0]'."""
    return f"L{level - 1}[{index}]"


def failure_path(level: int, message: str) -> Optional[str]:
    """The path below a level-`level` Worker to where its run's first failure
    happened ('chip 1', 'L3[0] → chip 1'), read from the engine's failure text;
    None when the text names no child."""
    m = _FAILURE.match(message)
    if m is None:
        return None
    kind, index, cause = m.group(1), int(m.group(2)), m.group(3)
    if kind != "worker":
        return f"{kind} {index}"
    name = child_name(level, index)
    below = _PATH.match(cause)
    # The child's own text starts with its path ("L3[0] → chip 1: ..."); a child
    # that died or timed out has none, and the path ends at the child.
    if below is not None and below.group(0).startswith(name) and cause[below.end():].startswith(": "):
        return below.group(0)
    return name


def with_path(head: str, level: int, message: str) -> str:
    """`message` led by the failure's path from `head` down ('L4 → L3[0] → chip 1: ...')."""
    below = failure_path(level, message)
    return f"{head} → {below}: {message}" if below else f"{head}: {message}"


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
                    "orchestration passes on the descriptors it received")
            writes = args.tag(i) in _WRITING_TAGS
            if any((w or not writes) and overlap(v, t)[0] == TensorOverlap.COVERED for v, w in views):
                continue
            written = " written by" if writes else ""
            raise ValueError(
                f"{what} refused: argument {i} ({args.tag(i).name}) names bytes of buffer {t.buffer.identity} outside "
                f"every view of it{written} the parent's task forwarded; a nested orchestration may only touch the "
                "views its task received (the parent ordered its tasks by them)")


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


class NextLevelServer:
    """What a nested Worker's child process calls per task of its parent:
    runs orchestration `callable_id` as one run of `worker`; returns None on
    success, or the failure as text led by its path."""

    def __init__(self, worker: "Worker", orchestrations: Sequence[Callable[..., Any]]):
        self._worker = worker
        self._orchestrations = list(orchestrations)

    def __call__(self, callable_id: int, blob: bytes, config: bytes) -> Optional[str]:
        name = self._worker.path_name
        try:
            fn = self._orchestrations[callable_id]
        except IndexError:
            return f"{name}: unknown orchestration {callable_id}"
        try:
            cfg = CallConfig.from_bytes(config)
            args, scope = forwarded_args(blob, cfg)
            self._worker._run_forwarded(fn, args, cfg, scope)
        except RuntimeError as e:
            return with_path(name, self._worker.level, str(e))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent as data
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
            return f"{name}: the orchestration {getattr(fn, '__qualname__', repr(fn))!r} raised:\n{text}"
        return None


Dispatch = Callable[[int, bytes, bytes], Optional[str]]


def start_child(parent: "Worker", index: int) -> Tuple[Dispatch, Callable[[], None], Callable[[list], None]]:
    """Called in next-level child `index` right after the parent forked it:
    starts the child's Worker and returns (dispatch, close, forget) for its
    lane. A child that cannot start answers every task with why. forget(ids):
    the owner freed these backings; they go from this process's import cache
    and, through the child's own Worker, from every lane below."""
    child = parent._children[index]
    child._adopt(parent, index)
    try:
        child.init()
    except BaseException as e:  # noqa: BLE001 - reported on every task instead
        why = f"{child.path_name}: the Worker did not start: {type(e).__name__}: {e}"

        def refuse(callable_id: int, blob: bytes, config: bytes) -> str:
            return why

        return refuse, child.close, forget_imports

    def forget(identities: list) -> None:
        forget_imports(identities)
        if child._core is not None and not child._core.closed:
            child._core.forget(identities)

    return NextLevelServer(child, parent._orchestrations), child.close, forget
