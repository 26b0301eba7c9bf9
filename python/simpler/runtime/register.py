"""Worker.register: a callable into the Worker's CallableTable, and after init()
into its running children.

A level-4 or higher Worker takes registrations before init() only; a running
level-3 Worker installs each new callable in every child of its kind.

The children were forked at init() and know what was registered then. A
callable registered later reaches each child of its kind as an install message
through the child's own mailbox (docs/internals/ipc.md, "The install message"): an idle
child gets it at once, a busy one when its task is back, and every child
handles it before any later task. register() returns the handle once every
child has answered, so a task naming the handle never reaches a child that
does not have the callable; if a child could not install it, register() raises
RuntimeError naming each such child and why, returns no handle, and the Worker
and its other callables go on as before.

- A sub-worker callable travels by import path or pickled
  (simpler.runtime.callables.sub_payload); a function defined in __main__ after
  init() does not exist in the sub-workers: register it by import path.
- A chip callable travels by its orchestration name and library path
  (simpler._core.chip_install_payload); each chip loads the library unless it
  has it and resolves the name (docs/internals/chip.md, "Callables registered after
  init()"). Both are checked in the parent first, as before init().
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Union

from simpler._core import ChildKind, TaskKind, chip_install_payload
from simpler.model.arg_checks import check_type
from simpler.model.callable_handle import CallableHandle
from simpler.model.chip_callable import ChipCallable, check_orchestrations
from simpler.runtime.callables import PathCallable, callable_name, sub_payload
from simpler.runtime.state import WAIT_SLICE_S, RuntimeState


def register(
    state: RuntimeState, fn: Union[ChipCallable, Callable[..., None], str], kind: Optional[TaskKind]
) -> CallableHandle:
    """Worker.register (see its docstring)."""
    table = state.callables
    state.check_process("register")
    if state.parent is not None:
        raise RuntimeError(
            f"Worker.register: this Worker is {state.path}, a child of another Worker; register on "
            "the top Worker (every Worker below it knows the same callables)"
        )
    running = state.core is not None
    if running:
        state.running()  # refuses on a closed Worker
        if state.level > 3:
            raise RuntimeError(
                f"Worker.register: {state.path} is a level-{state.level} Worker, whose tree was "
                "started at init() with the callables registered before it; register before "
                "init() (a level-3 Worker takes callables after init())"
            )
    if kind is not None:
        check_type("Worker.register.kind", kind, TaskKind)
    if isinstance(fn, ChipCallable):
        if kind == TaskKind.SUB:
            raise ValueError(
                f"Worker.register: a ChipCallable ({fn.orchestration!r}) runs on a chip, not on a "
                "sub-worker (kind=TaskKind.SUB)"
            )
        check_orchestrations([*table.chip, fn])
        if running:
            return _register_chip(state, fn)
        table.chip.append(fn)
        return CallableHandle(len(table.chip) - 1, ChildKind.CHIP, fn.orchestration, table.serial)
    if isinstance(fn, str):
        fn = PathCallable(fn)
    if not callable(fn):
        raise TypeError(f"Worker.register: {fn!r} is neither a ChipCallable, a callable nor an import path")
    if kind is None:
        kind = TaskKind.NEXT_LEVEL if state.level > 3 else TaskKind.SUB
    if kind == TaskKind.NEXT_LEVEL:
        if state.level == 3:
            raise ValueError(
                f"Worker.register: the next level of a level-3 Worker is chips; a Python callable "
                f"({callable_name(fn)}) runs on its sub-workers (kind=TaskKind.SUB), a chip "
                "orchestration is a ChipCallable"
            )
        table.orchestrations.append(fn)
        return CallableHandle(len(table.orchestrations) - 1, ChildKind.WORKER, callable_name(fn), table.serial)
    if running:
        return _register_sub(state, fn, callable_name(fn))
    table.sub.append(fn)
    return CallableHandle(len(table.sub) - 1, ChildKind.SUB_WORKER, callable_name(fn), table.serial)


def _register_chip(state: RuntimeState, fn: ChipCallable) -> CallableHandle:
    """Installs checked chip callable `fn` on every chip of running Worker `state`."""
    payload = chip_install_payload(fn.orchestration, fn.library or "")
    handle = _install(state, ChildKind.CHIP, fn, fn.orchestration, payload)
    chip = state.config.chip_lane.chip
    if fn.library is not None and fn.library not in chip.libraries:
        chip.libraries = [*chip.libraries, fn.library]
    return handle


def _register_sub(state: RuntimeState, fn: Callable[..., Any], name: str) -> CallableHandle:
    """Installs sub-worker callable `fn` in every sub-worker of running Worker `state`."""
    return _install(state, ChildKind.SUB_WORKER, fn, name, sub_payload(fn, name))


def _install(state: RuntimeState, kind: ChildKind, entry: Any, name: str, payload: bytes) -> CallableHandle:
    core = state.running()
    table: List[Any] = state.callables.chip if kind == ChildKind.CHIP else state.callables.sub
    with state.callables.lock:  # the next id, and the tables it indexes, one register() at a time
        callable_id = len(table)
        ticket = core.begin_install(kind, callable_id, name, payload)
        table.append(entry)
        if kind == ChildKind.CHIP:
            chip = state.config.chip_lane.chip
            chip.orchestrations = [*chip.orchestrations, name]
        else:
            state.config.sub_callable_names = [*state.config.sub_callable_names, name]
    try:
        while (refused := core.wait_install(ticket, WAIT_SLICE_S)) is None:
            pass
    except BaseException:  # Ctrl-C: no handle; the children still install it
        core.abandon_install(ticket)
        raise
    if refused:
        what = "; ".join(f"{child.name()}: {why}" for child, why in refused)
        raise RuntimeError(
            f"Worker.register: {name!r} could not be installed on {len(refused)} "
            f"{'child' if len(refused) == 1 else 'children'} ({what}); no handle was returned, and "
            "the Worker and its other callables are as they were"
        )
    return CallableHandle(callable_id, kind, name, state.callables.serial)
