"""The orchestration surface: what an orch function receives.

An orch function only builds the graph — it names tensors, tags them and
submits; the runtime infers the edges and runs the tasks. Computing on data
here would be invisible to dependency inference: use NumPy/torch before or
after `Worker.run()`, or inside a sub-worker callable.

Device memory: `alloc_child_tensor(worker, shape, dtype)` allocates on one
chip; `copy_to(dst, src)` / `copy_from(dst, src)` move bytes between host views
and device views as tasks on that chip (ordered like any other task by their
tags). An allocation belongs to the innermost `with orch.scope():` open when it
was made, or to the run; when that ends, the memory is refused to later
submits and freed once every task submitted before has finished.

Communication domains: `allocate_domain(name, workers, window_size, buffers)`
carves a symmetric window on each listed chip (simpler.model.domain); released when
its `with` block ends, or with the run.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from simpler._core import (
    CallConfig,
    CanonicalIdentity,
    DataType,
    TaskHandle,
    TaskHandles,
    TaskKind,
    element_size,
)
from simpler.model.arg_checks import check_bool, check_int, check_shape, check_type, got
from simpler.model.callable_handle import CallableHandle
from simpler.model.device_buffer import DeviceBuffer
from simpler.model.domain import Domain, GlobalDomain
from simpler.model.submitted_tasks import Part, SubmittedIds, SubmittedTasks
from simpler.model.task_interface import TaskArgs, TaskArgsBatch, Tensor, TensorArgType
from simpler.runtime.callables import CallableTable
from simpler.runtime.errors import child_name
from simpler.runtime.log import logger
from simpler.runtime.state import RuntimeState, WorkerView

if TYPE_CHECKING:
    from simpler._core import EngineWorker
    from simpler.runtime.forwarded import ForwardedScope


def _check_views(what: str, src: object, dst: object) -> None:
    """TypeError naming the argument of a copy that is not a view."""
    for role, t in (("source", src), ("destination", dst)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{what} {role}: expected a Tensor (a view, e.g. DeviceBuffer.tensor()), got {type(t).__name__} {t!r}"
            )


_DEFAULT_CONFIG = CallConfig().to_bytes()
# The kinds as module globals: an enum class attribute read costs ~40 ns more, per submit.
_SUB, _NEXT_LEVEL = TaskKind.SUB, TaskKind.NEXT_LEVEL


def _config_bytes(cfg: Optional[CallConfig]) -> bytes:
    """A submit's call config as the engine takes it (None: the default)."""
    if cfg is None:
        return _DEFAULT_CONFIG
    if type(cfg) is not CallConfig:
        check_type("cfg", cfg, CallConfig)
    return cfg.to_bytes()


def _checked_list(field: str, values: object, item_type: Optional[type] = None) -> list:
    """The items of a group's args_list or workers argument as a list; TypeError
    naming the field when it is not a sequence or an item is not an item_type."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{field}: expected a sequence (got {got(values)})")
    if item_type is not None:
        for i, v in enumerate(values):
            check_type(f"{field}[{i}]", v, item_type)
    return list(values)


class Orchestrator:
    """What an orchestration function is given (`orch_fn(orch, args, cfg)`): it submits the run's
    tasks (to chips, sub-workers or next-level Workers), allocates device memory and communication
    domains, and opens scopes. Every submit checks its task and infers its dependencies at once,
    raising ValueError and recording nothing on a refusal; the tasks run as their inputs are ready.
    It takes work only while its orch_fn runs. Worker.run returns it: `submitted` lists the run's
    tasks."""

    def __init__(
        self,
        state: RuntimeState,
        worker: WorkerView,
        scope: Optional[ForwardedScope] = None,
        core: Optional[EngineWorker] = None,
    ) -> None:
        self._state = state
        self._worker = worker  # what .worker returns: the Worker `state` is the state of
        # core: the engine as state.running() just returned it (run() checked it); else checked here
        self._core = state.running() if core is None else core
        self._serial = state.callables.serial
        # Where each kind of task runs (a handle must be of that kind of child); the Worker's, read-only.
        self._runs_on = state.runs_on_by_kind
        # A nested run: what its parent's task forwarded, which every submit must stay within.
        self._scope = scope
        # Worker(max_unfinished=N): submits that go in before the window is looked at again (_await_room).
        self._room = 0
        # Every task submitted through this, in order: the ids of one-at-a-time submits in a row (SubmittedIds),
        # a TaskHandles per batch.
        self._submitted: List[Part] = []
        self._ids: Optional[SubmittedIds] = None  # the part one-at-a-time submits add to now
        self._submitted_view: Optional[SubmittedTasks] = None  # made when first read (most runs never read it)
        self._scopes: List[List[DeviceBuffer]] = [[]]  # [0]: the run's own scope
        # What this run allocated, by identity: once a block is freed the engine no
        # longer knows it, and a refusal naming it says it was released from this.
        self._allocated: Dict[CanonicalIdentity, DeviceBuffer] = {}
        self._domains: List[Domain] = []  # what this run carved (released at the latest when it ends)
        self._ended = False  # the run finished building: nothing more may be submitted through this

    @property
    def submitted(self) -> SubmittedTasks:
        """Every task submitted through this Orchestrator, in submit order: a
        read-only sequence of TaskHandle that grows with each submit. Handles
        are made when read: one-at-a-time submits are kept as their ids (a run of
        consecutive ids as one range, whatever its length; at most 8 bytes a
        task), a batch as its TaskHandles."""
        view = self._submitted_view
        if view is None:
            view = self._submitted_view = SubmittedTasks(self._submitted)
        return view

    @property
    def worker(self) -> WorkerView:
        """The Worker this orchestration runs on (in a nested run: the child's own Worker)."""
        return self._worker

    def _check_open(self, what: str) -> None:
        if self._ended:
            raise RuntimeError(
                f"Orchestrator.{what}: this Orchestrator's run has ended (orch_fn returned); submit "
                "from inside the orchestration function, or start a new Worker.run()"
            )

    def _submit(
        self,
        kind: TaskKind,
        callable: CallableHandle,
        members: Sequence[Tuple[TaskArgs, Optional[int]]],
        cfg: Optional[CallConfig],
    ) -> TaskHandle:
        self._check_open("submit")
        handle = self._state.check_callable(callable, kind)
        config = _config_bytes(cfg)
        if self._scope is not None:
            for m, (args, _) in enumerate(members):
                self._scope.check(args, f"{self._state.path}: submit (member {m})")
        self._await_room(1)
        try:
            task: TaskHandle = self._core.submit(kind, handle.id, members, config)
        except ValueError as e:
            raise self._explain(e, [a for a, _ in members]) from None
        self._record(task)
        return task

    def _await_room(self, tasks: int) -> None:
        """Before `tasks` tasks go in: when the Worker's window (max_unfinished) is full, waits for
        room with the GIL released, so the program's other threads run meanwhile (the engine's own
        submit would wait with it held). Counts the room left, so most submits ask nothing."""
        if self._room >= tasks:
            self._room -= tasks
            return
        room = self._core.room()
        if room == 0:
            self._core.await_room()
            room = self._core.room()
        self._room = max(0, room - tasks)

    def _record(self, task: TaskHandle) -> None:
        if self._ids is None:
            self._ids = SubmittedIds(task.run, task.id)
            self._submitted.append(self._ids)
        else:
            self._ids.add(task.id)

    def _submit_one(
        self, kind: TaskKind, callable: CallableHandle, args: TaskArgs, worker: Optional[int], cfg: Optional[CallConfig]
    ) -> TaskHandle:
        # The hot path: one member, no list, the default config prebuilt.
        if (
            type(callable) is not CallableHandle
            or callable.runs_on != self._runs_on[kind]
            or callable.worker_serial != self._serial
            or self._core.closed
            or self._ended
        ):
            self._check_open("submit")
            self._state.check_callable(callable, kind)
        config = _DEFAULT_CONFIG if cfg is None else _config_bytes(cfg)
        if self._scope is not None:
            self._scope.check(args, f"{self._state.path}: submit")
        if self._room > 0:  # _await_room(1), inlined on the hot path
            self._room -= 1
        else:
            self._await_room(1)
        try:
            task: TaskHandle = self._core.submit_one(kind, callable.id, args, worker, config)
        except ValueError as e:
            raise self._explain(e, [args]) from None
        ids = self._ids
        if ids is not None and task.id == ids.end:  # the next id of a streamed run: its range grows
            ids.end += 1
        else:
            self._record(task)
        return task

    def submit_next_level(
        self, callable: CallableHandle, args: TaskArgs, cfg: Optional[CallConfig] = None, worker: int = 0
    ) -> TaskHandle:
        """Runs `callable` on next-level child `worker` with `args`: a chip
        orchestration on a chip of a level-3 Worker; an orchestration function
        as one run of a next-level Worker (level 4 and above)."""
        return self._submit_one(_NEXT_LEVEL, callable, args, worker, cfg)

    def submit_next_level_group(
        self,
        callable: CallableHandle,
        args_list: Sequence[TaskArgs],
        cfg: Optional[CallConfig] = None,
        workers: Optional[Sequence[int]] = None,
    ) -> TaskHandle:
        """One node of N members, member i on `workers[i]` (default: worker i), all
        dispatched together. Members are not ordered against each other."""
        args_list = _checked_list("submit_next_level_group.args_list", args_list, TaskArgs)
        workers = (
            list(range(len(args_list)))
            if workers is None
            else _checked_list("submit_next_level_group.workers", workers)
        )
        if len(workers) != len(args_list):
            raise ValueError(f"submit_next_level_group: {len(args_list)} argument lists but {len(workers)} workers")
        return self._submit(TaskKind.NEXT_LEVEL, callable, list(zip(args_list, workers, strict=True)), cfg)

    def submit_sub(self, callable: CallableHandle, args: TaskArgs, cfg: Optional[CallConfig] = None) -> TaskHandle:
        """Runs Python `callable(MappedArgs)` on any idle sub-worker."""
        return self._submit_one(_SUB, callable, args, None, cfg)

    def submit_sub_group(
        self, callable: CallableHandle, args_list: Sequence[TaskArgs], cfg: Optional[CallConfig] = None
    ) -> TaskHandle:
        """One node of N sub tasks, dispatched together to N distinct sub-workers."""
        args_list = _checked_list("submit_sub_group.args_list", args_list, TaskArgs)
        return self._submit(TaskKind.SUB, callable, [(a, None) for a in args_list], cfg)

    # -- batches ------------------------------------------------------------------
    def _submit_many(
        self,
        kind: TaskKind,
        what: str,
        callable: CallableHandle,
        args_list: "TaskArgsBatch | Sequence[TaskArgs]",
        workers: "int | List[int] | None",
        cfg: Optional[CallConfig],
    ) -> TaskHandles:
        self._check_open(what)
        handle = self._state.check_callable(callable, kind)
        config = _config_bytes(cfg)
        batch: "TaskArgsBatch | list"
        if type(args_list) is TaskArgsBatch:
            batch = args_list
        else:
            batch = _checked_list(f"{what}.args_list", args_list)  # the binding checks each item is a TaskArgs
        if self._scope is not None:
            for i in range(len(batch)):
                self._scope.check(batch[i], f"{self._state.path}: {what} (task {i} of the batch)")
        self._await_room(len(batch))
        tasks, refused, why = self._core.submit_many(kind, handle.id, batch, workers, config)
        if refused >= 0:
            error = self._explain(ValueError(why), [batch[refused]])
            raise ValueError(
                f"{what}: task {refused} of the batch refused (none of its {len(batch)} tasks was submitted): {error}"
            )
        if len(tasks):
            self._submitted.append(tasks)
            self._ids = None  # a one-at-a-time submit after it starts a new part
        return tasks

    def submit_many(
        self,
        callable: CallableHandle,
        args_list: "TaskArgsBatch | Sequence[TaskArgs]",
        workers: "int | Sequence[int] | None" = None,
        cfg: Optional[CallConfig] = None,
    ) -> TaskHandles:
        """N independent next-level tasks in one call: task i runs `callable` with
        args_list[i] (a TaskArgsBatch, e.g. TaskArgsBatch.tiled, or a sequence of
        TaskArgs) on `workers` (one index for all, default 0, or one per task).
        Each is checked and inferred exactly as N submit_next_level calls in order
        (edges among the batch's own tasks too); returns their handles (a
        TaskHandles: a read-only sequence, each handle made when read). All or
        none: every task is checked before any is recorded, and a refusal raises
        ValueError naming the task's index and the engine's reason, with none of
        the batch submitted."""
        if workers is None:
            workers = 0
        elif not isinstance(workers, int) or isinstance(workers, bool):
            workers = _checked_list("submit_many.workers", workers)
        return self._submit_many(TaskKind.NEXT_LEVEL, "submit_many", callable, args_list, workers, cfg)

    def submit_sub_many(
        self,
        callable: CallableHandle,
        args_list: "TaskArgsBatch | Sequence[TaskArgs]",
        cfg: Optional[CallConfig] = None,
    ) -> TaskHandles:
        """N independent sub tasks in one call, each as submit_sub(callable,
        args_list[i]) in order; refusals as submit_many."""
        return self._submit_many(TaskKind.SUB, "submit_sub_many", callable, args_list, None, cfg)

    # -- device memory ----------------------------------------------------------
    def alloc_child_tensor(
        self, worker: int, shape: Sequence[int], dtype: DataType, scoped: bool = True
    ) -> DeviceBuffer:
        """DEVICE_MALLOC memory for one (shape, dtype) on chip `worker`. With
        scoped=False it outlives the run, until `release()` or Worker.close()."""
        self._check_open("alloc_child_tensor")
        core = self._state.running()
        if self._state.level > 3:
            raise ValueError(
                f"alloc_child_tensor on {self._state.path} (level {self._state.level}): device memory "
                "belongs to the chips of a level-3 Worker; allocate it inside the orchestration function "
                "that runs there (its orch.alloc_child_tensor)"
            )
        worker = check_int("alloc_child_tensor.worker", worker, bits=32)
        shape = check_shape("alloc_child_tensor.shape", shape)
        check_type("alloc_child_tensor.dtype", dtype, DataType)
        check_bool("alloc_child_tensor.scoped", scoped)
        desc = core.alloc_device(worker, math.prod(shape) * element_size(dtype))
        buf = DeviceBuffer(core, desc, worker, shape, dtype)
        self._allocated[buf.identity] = buf
        if scoped:
            self._scopes[-1].append(buf)
        return buf

    # -- communication domains -------------------------------------------------
    def allocate_domain(
        self,
        name: str,
        workers: Sequence[int],
        window_size: int,
        buffers: "Dict[str, int] | Sequence[Tuple[str, int]]" = (),
    ) -> Domain:
        """A communication domain: a window of `window_size` bytes at the same
        offset on each chip of `workers` (rank order), holding the named
        `buffers` ({name: nbytes} or [(name, nbytes), ...]) in order, each on 64
        bytes. Use it as `with orch.allocate_domain(...) as dom:`; leaving the
        block (or dom.release()) frees the windows once every task submitted
        before has finished. Every check is made first: ValueError for a bad
        name, a name already live, workers that are not distinct live chips,
        window_size 0 or buffers that do not fit; RuntimeError when the window
        heaps have no room. A refusal allocates nothing."""
        self._check_open("allocate_domain")
        core = self._state.running()
        if self._state.level > 3 or self._state.num_chips == 0:
            raise ValueError(
                f"allocate_domain on {self._state.path} (level {self._state.level}, "
                f"{self._state.num_chips} chips): windows belong to the chips of a level-3 Worker"
            )
        if not isinstance(name, str):
            raise TypeError(f"allocate_domain.name: expected str (got {got(name)})")
        chips = [
            check_int(f"allocate_domain.workers[{i}]", w, bits=32)
            for i, w in enumerate(_checked_list("allocate_domain.workers", workers))
        ]
        window_size = check_int("allocate_domain.window_size", window_size, bits=64)
        specs = _buffer_specs("allocate_domain", buffers)
        carved = core.allocate_domain(name, chips, window_size, specs)
        dom = Domain(core, name, chips, window_size, [n for n, _ in specs], carved)
        self._domains.append(dom)
        return dom

    def allocate_global_domain(
        self,
        name: str,
        members: Sequence[Tuple[int, int]],
        window_size: int,
        buffers: "Dict[str, int] | Sequence[Tuple[str, int]]" = (),
    ) -> GlobalDomain:
        """On a level-4 Worker: a communication domain across chips of its
        local level-3 children, `members` the (l3, chip) pairs in rank order
        (l3 a local child's index, chip one of its chips); otherwise as
        allocate_domain (window_size, buffers, the `with` block, the release).
        Tasks sent to a member's L3 child carry the window buffers, and the
        orchestration there names them on its member chips. ValueError for a
        Worker that is not level 4, a remote or unknown child, a chip the child
        does not have, a child whose chips drive OpenCL devices, duplicate
        members and what allocate_domain refuses. A refusal allocates nothing."""
        self._check_open("allocate_global_domain")
        core = self._state.running()
        worker = self._state
        if worker.level == 3:
            raise ValueError(
                f"allocate_global_domain on {worker.path} (level 3): the chips of a level-3 Worker share "
                "windows through allocate_domain; a global domain spans the L3 children of a level-4 "
                "Worker"
            )
        if worker.level != 4:
            raise ValueError(
                f"allocate_global_domain on {worker.path} (level {worker.level}): a global domain spans "
                "the chips of the level-3 children of a level-4 Worker"
            )
        if not isinstance(name, str):
            raise TypeError(f"allocate_global_domain.name: expected str (got {got(name)})")
        children = worker.children
        checked: List[Tuple[int, int]] = []
        slots: List[int] = []
        for i, m in enumerate(_checked_list("allocate_global_domain.members", members)):
            where = f"allocate_global_domain {name!r}: members[{i}]"
            if not isinstance(m, tuple) or len(m) != 2:
                raise TypeError(f"{where}: expected an (l3, chip) pair (got {got(m)})")
            l3 = check_int(f"{where}.l3", m[0], bits=32)
            chip = check_int(f"{where}.chip", m[1], bits=32)
            if l3 >= len(children):
                if l3 < worker.num_workers:
                    raise ValueError(
                        f"{where}: child {l3} of {worker.path} is a remote Worker (add_remote_workers); "
                        "a global domain takes local children only"
                    )
                raise ValueError(
                    f"{where}: l3={l3} is not a child of {worker.path} (it has {len(children)} local level-3 children)"
                )
            if chip >= children[l3].num_chips:
                raise ValueError(
                    f"{where}: chip={chip} is not a chip of {child_name(worker.level, l3)} (it has "
                    f"{children[l3].num_chips} chips)"
                )
            if (l3, chip) in checked:
                first = checked.index((l3, chip))
                raise ValueError(f"{where}: member ({l3}, {chip}) is listed twice (members[{first}] and members[{i}])")
            checked.append((l3, chip))
            slots.append(worker.global_first_slot[l3] + chip)
        if not checked:
            raise ValueError(f"allocate_global_domain {name!r}: members must name at least one (l3, chip) pair")
        window_size = check_int("allocate_global_domain.window_size", window_size, bits=64)
        specs = _buffer_specs("allocate_global_domain", buffers)
        carved = core.allocate_global_domain(name, slots, window_size, specs)
        dom = GlobalDomain(core, name, checked, window_size, [n for n, _ in specs], carved, worker.level - 1)
        self._domains.append(dom)
        return dom

    def _released(self, identity: CanonicalIdentity) -> Optional[str]:
        """Why `identity` is refused when it is device memory or a window buffer this run allocated and freed."""
        buf = self._allocated.get(identity)
        if buf is None or not buf.released:
            return next((w for d in self._domains if (w := d._why_released(identity)) is not None), None)
        return (
            f"device memory {identity} of chip {buf.chip} was released (its scope ended or it was freed); "
            "a task may not name it any more"
        )

    def _explain(self, error: ValueError, args_list: Sequence[TaskArgs]) -> ValueError:
        """The engine's refusal, plus the release when it names a block this run
        freed (unless the engine said so); logged (INFO, the `simpler` logger) as
        it is raised."""
        why = next(
            (
                w
                for args in args_list
                for i in range(args.tensor_count)
                if (w := self._released(args[i].buffer.identity)) is not None
            ),
            None,
        )
        if (
            why is not None
            and "(its scope ended or it was freed)" not in str(error)
            and "(its block ended or release() was called)" not in str(error)
        ):
            error = ValueError(f"{error}: {why}")
        logger.info("%s: submit refused: %s", self._state.path, str(error))  # text, not the traceback
        return error

    def _device_chip(self, t: Tensor, role: str) -> int:
        chip = self._state.running().device_owner(t.buffer.identity)
        if chip is None:
            why = self._released(t.buffer.identity)
            if why is not None:
                raise ValueError(f"{role}: {why}")
            raise ValueError(
                f"{role}: {t.buffer.identity} is not device memory of this Worker (allocate it with alloc_child_tensor)"
            )
        return chip

    def _copy(self, src: Tensor, dst: Tensor, chip: int, cfg: Optional[CallConfig]) -> TaskHandle:
        if tuple(src.shapes) != tuple(dst.shapes) or src.dtype != dst.dtype:
            raise ValueError(
                f"copy: source {tuple(src.shapes)} {src.dtype.name} and destination "
                f"{tuple(dst.shapes)} {dst.dtype.name} must have the same shape and dtype"
            )
        ta = TaskArgs()
        ta.add_tensor(src, TensorArgType.INPUT)
        ta.add_tensor(dst, TensorArgType.OUTPUT_EXISTING)
        return self._submit_one(TaskKind.NEXT_LEVEL, self._state.callables.copy, ta, chip, cfg)

    def copy_to(self, dst: Tensor, src: Tensor, cfg: Optional[CallConfig] = None) -> TaskHandle:
        """Host view `src` -> device view `dst`, as a task on dst's chip."""
        self._check_open("copy_to")
        _check_views("copy_to", src, dst)
        return self._copy(src, dst, self._device_chip(dst, "copy_to destination"), cfg)

    def copy_from(self, dst: Tensor, src: Tensor, cfg: Optional[CallConfig] = None) -> TaskHandle:
        """Device view `src` -> host view `dst`, as a task on src's chip."""
        self._check_open("copy_from")
        _check_views("copy_from", src, dst)
        return self._copy(src, dst, self._device_chip(src, "copy_from source"), cfg)

    @contextmanager
    def scope(self) -> Iterator["Orchestrator"]:
        """Device memory allocated inside is released when the block ends (freed
        once the tasks submitted before then have finished)."""
        self._check_open("scope")
        self._scopes.append([])
        try:
            yield self
        finally:
            self._release(self._scopes.pop())

    def _release(self, buffers: List[DeviceBuffer]) -> None:
        for b in buffers:
            b.release()

    def _end_run(self) -> None:
        self._ended = True
        while self._scopes:
            self._release(self._scopes.pop())  # innermost first, as the scopes would have ended
        for d in self._domains:
            d.release()


def _buffer_specs(what: str, buffers: "Dict[str, int] | Sequence[Tuple[str, int]]") -> List[Tuple[str, int]]:
    """A domain's buffers ({name: nbytes} or [(name, nbytes), ...]) as checked (name, nbytes) pairs."""
    items = list(buffers.items()) if isinstance(buffers, dict) else _checked_list(f"{what}.buffers", buffers)
    specs: List[Tuple[str, int]] = []
    for i, item in enumerate(items):
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"{what}.buffers[{i}]: expected a (name, nbytes) pair (got {got(item)})")
        n, size = item
        if not isinstance(n, str):
            raise TypeError(f"{what}.buffers[{i}]: name: expected str (got {got(n)})")
        specs.append((n, check_int(f"{what}.buffers[{n!r}]", size, bits=64)))
    return specs


def callables_of(orch: Orchestrator) -> CallableTable:
    """The callables of the Worker `orch` builds a run of, the runtime's own
    included (simpler.collectives submits std.copy, std.sum_n and the phases)."""
    return orch._state.callables


def end_run(orch: Orchestrator) -> None:
    """The run `orch` builds has finished building (its orchestration function
    returned or raised): nothing more may be submitted through it, and its
    scopes' device memory and its domains are released."""
    orch._end_run()
