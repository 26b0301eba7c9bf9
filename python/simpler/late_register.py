"""Registering a callable on a running level-3 Worker: Worker.register after init().

The children were forked at init() and know what was registered then. A
callable registered later reaches each child of its kind as an install message
through the child's own mailbox (docs/ipc.md, "The install message"): an idle
child gets it at once, a busy one when its task is back, and every child
handles it before any later task. register() returns the handle once every
child has answered, so a task naming the handle never reaches a child that
does not have the callable; if a child could not install it, register() raises
RuntimeError naming each such child and why, returns no handle, and the Worker
and its other callables go on as before.

- A sub-worker callable travels by import path ("pkg.module:fn", resolved in
  each sub-worker) or pickled (a module-level function pickles by reference:
  its module and name, resolved in each sub-worker). What pickle cannot carry
  (a lambda, a closure) is refused here, before anything is sent. The parent's
  sys.path goes along, so a module the parent can import after init() is found.
  A function defined in __main__ after init() does not exist in the sub-workers
  (they hold __main__ as it was at the fork): register it by import path.
- A chip callable travels by its orchestration name and library path
  (simpler._core.chip_install_payload); each chip loads the library unless it
  has it and resolves the name (docs/chip.md, "Callables registered after
  init()"). Both are checked in the parent first, as before init().

The sub-worker side is make_installer(): the function each sub-worker child
calls with an install message.
"""

from __future__ import annotations

import pickle
import sys
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Union

from simpler._core import ChildKind, chip_install_payload
from simpler.callable_handle import CallableHandle
from simpler.chip_callable import ChipCallable
from simpler.remote import PathCallable, resolve_all, resolve_path

if TYPE_CHECKING:
    from simpler.worker import Worker

# How often a register() waiting for the children's answers returns to the
# interpreter, so that Ctrl-C is seen promptly.
_WAIT_SLICE_S = 0.05

_MAIN_HINT = ("; the sub-workers hold __main__ as it was when init() forked them, so a function defined in "
              "__main__ after init() does not exist there: define it in a module and register it as "
              "'pkg.module:fn', or define it before init()")


def sub_payload(fn: Callable[..., Any], name: str) -> bytes:
    """The install payload of sub-worker callable `fn` (what make_installer reads):
    its import path, or its pickle, with the parent's sys.path. RuntimeError when
    an import path does not resolve here; TypeError when pickle cannot carry `fn`."""
    data: Union[str, bytes]
    if isinstance(fn, PathCallable):
        try:
            resolve_all([fn])
        except RuntimeError as e:
            raise RuntimeError(f"Worker.register: {e}") from None
        form, data = "path", fn.path
    else:
        try:
            data = pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise TypeError(f"Worker.register: {name} cannot be sent to the sub-workers, which init() already "
                            f"started: pickle cannot carry it ({type(e).__name__}: {e}); register a module-level "
                            "function, or its import path 'pkg.module:fn'") from None
        form = "pickle"
    return pickle.dumps((form, data, list(sys.path)), protocol=pickle.HIGHEST_PROTOCOL)


class _NotInstalled:
    """A sub-worker's entry for a callable it could not install: a task naming it
    fails saying why (no handle names one, so this is a guard only)."""

    def __init__(self, callable_id: int, why: str):
        self.callable_id, self.why = callable_id, why

    def __call__(self, *_args: Any) -> None:
        raise RuntimeError(f"sub-worker callable {self.callable_id} was not installed in this sub-worker: {self.why}")


def make_installer(callables: List[Callable[..., Any]]) -> Callable[[int, bytes], Optional[str]]:
    """The install handler of each sub-worker child: puts the callable an install
    message carries into `callables` (the dispatcher's table, this child's copy)
    at its id. Returns None, or why it could not (the entry then says so)."""

    def install(callable_id: int, payload: bytes) -> Optional[str]:
        try:
            form, data, path = pickle.loads(payload)
            sys.path.extend(p for p in path if p not in sys.path)
            fn = resolve_path(data) if form == "path" else pickle.loads(data)
            if not callable(fn):
                raise TypeError(f"{fn!r} is {type(fn).__name__}, not a callable")
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent as text
            why = f"{type(e).__name__}: {e}"
            if "__main__" in why:
                why += _MAIN_HINT
            _place(callables, callable_id, _NotInstalled(callable_id, why))
            return why
        _place(callables, callable_id, fn)
        return None

    return install


def _place(callables: List[Callable[..., Any]], callable_id: int, entry: Callable[..., Any]) -> None:
    while len(callables) < callable_id:
        callables.append(_NotInstalled(len(callables), "its install message never arrived"))
    if callable_id < len(callables):
        callables[callable_id] = entry
    else:
        callables.append(entry)


def register_chip(worker: "Worker", fn: ChipCallable) -> CallableHandle:
    """Installs checked chip callable `fn` on every chip of running `worker`."""
    payload = chip_install_payload(fn.orchestration, fn.library or "")
    handle = _install(worker, ChildKind.CHIP, fn, fn.orchestration, payload)
    chip = worker._config.chip_lane.chip
    if fn.library is not None and fn.library not in chip.libraries:
        chip.libraries = [*chip.libraries, fn.library]
    return handle


def register_sub(worker: "Worker", fn: Callable[..., Any], name: str) -> CallableHandle:
    """Installs sub-worker callable `fn` in every sub-worker of running `worker`."""
    return _install(worker, ChildKind.SUB_WORKER, fn, name, sub_payload(fn, name))


def _install(worker: "Worker", kind: ChildKind, entry: Any, name: str, payload: bytes) -> CallableHandle:
    core = worker._running()
    table: List[Any] = worker._chip_callables if kind == ChildKind.CHIP else worker._sub_callables
    with worker._register_lock:  # the next id, and the tables it indexes, one register() at a time
        callable_id = len(table)
        ticket = core.begin_install(kind, callable_id, name, payload)
        table.append(entry)
        if kind == ChildKind.CHIP:
            chip = worker._config.chip_lane.chip
            chip.orchestrations = [*chip.orchestrations, name]
        else:
            worker._config.sub_callable_names = [*worker._config.sub_callable_names, name]
    try:
        while (refused := core.wait_install(ticket, _WAIT_SLICE_S)) is None:
            pass
    except BaseException:  # Ctrl-C: no handle; the children still install it
        core.abandon_install(ticket)
        raise
    if refused:
        what = "; ".join(f"{child.name()}: {why}" for child, why in refused)
        raise RuntimeError(f"Worker.register: {name!r} could not be installed on {len(refused)} "
                           f"{'child' if len(refused) == 1 else 'children'} ({what}); no handle was returned, and "
                           "the Worker and its other callables are as they were")
    return CallableHandle(callable_id, kind, name, worker._serial)
