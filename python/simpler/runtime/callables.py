"""The callables a tree of Workers' tasks name, and how they travel.

CallableTable holds them by kind and id. A Python callable reaches a process
other than the one that registered it in one of two forms:

- by import path ("pkg.module:fn", a PathCallable), resolved at init() in every
  process that runs it (a remote rank, a sub-worker);
- pickled (a module-level function pickles by reference: its module and name).
  What pickle cannot carry (a lambda, a closure) is refused before anything is
  sent. The parent's sys.path goes along, so a module the parent can import
  after init() is found. A function defined in __main__ after init() does not
  exist in the sub-workers (they hold __main__ as it was at the fork).

sub_payload() is what an install message after init() carries for a sub-worker
callable (simpler.runtime.register), make_installer() what each sub-worker
child calls with it.
"""

from __future__ import annotations

import importlib
import itertools
import pickle
import sys
import threading
from typing import Any, Callable, List, Optional, Sequence, Union

from simpler._core import ChildKind, TaskKind
from simpler.model.arg_checks import text
from simpler.model.callable_handle import CallableHandle
from simpler.model.chip_callable import ChipCallable

# Each tree of Workers' serial, which its CallableHandles carry.
_serials = itertools.count(1)
# How many chip callables every Worker has before any register(): the runtime's own (std.copy, std.sum_n).
RUNTIME_CHIP_CALLABLES = 2

_MAIN_HINT = (
    "; the sub-workers hold __main__ as it was when init() forked them, so a function defined in "
    "__main__ after init() does not exist there: define it in a module and register it as "
    "'pkg.module:fn', or define it before init()"
)


def callable_name(fn: Callable[..., Any]) -> str:
    """What errors and traces call a Python callable: its __qualname__ (or
    repr), with what UTF-8 cannot encode escaped, so it can cross into C++."""
    name = getattr(fn, "__qualname__", None)
    return text(name if isinstance(name, str) else repr(fn))


class CallableTable:
    """The callables the tasks of one tree of Workers name, by kind and id: chip
    orchestrations (ChipCallable), sub-worker callables, and the orchestration
    functions next-level Workers run. A child Worker takes its top's table at
    its fork, so a handle names the same callable at every level; `lock`
    serializes the registrations after init() (each takes the next id).

    Chip callables 0 and 1 are the runtime's own: std.copy (`copy`), behind
    orch.copy_to / copy_from and the collectives' copies, and std.sum_n (`sum`),
    the collectives' reductions. `phase` is the runtime's own orchestration of a
    level-4 Worker with global windows (simpler.collectives.collective_phase),
    registered last at its init() so that the user's ids do not move."""

    def __init__(self) -> None:
        self.serial = next(_serials)
        self.chip: List[ChipCallable] = [ChipCallable("std.copy"), ChipCallable("std.sum_n")]
        self.sub: List[Callable[..., Any]] = []
        self.orchestrations: List[Callable[..., Any]] = []
        self.copy = CallableHandle(0, ChildKind.CHIP, "std.copy", self.serial)
        self.sum = CallableHandle(1, ChildKind.CHIP, "std.sum_n", self.serial)
        self.phase: Optional[CallableHandle] = None
        self.lock = threading.Lock()
        assert len(self.chip) == RUNTIME_CHIP_CALLABLES

    def has_registrations(self) -> bool:
        """Whether anything beyond the runtime's own was registered."""
        return bool(self.sub or self.orchestrations or len(self.chip) > RUNTIME_CHIP_CALLABLES)

    def add_phase(self, fn: Callable[..., Any], name: str) -> CallableHandle:
        """Registers the runtime's own orchestration `fn` as `phase` (once)."""
        if self.phase is None:
            self.orchestrations.append(fn)
            self.phase = CallableHandle(len(self.orchestrations) - 1, ChildKind.WORKER, name, self.serial)
        return self.phase

    def user_orchestrations(self) -> List[Callable[..., Any]]:
        """The orchestration functions the program registered (`phase` left out)."""
        phase = self.phase.id if self.phase is not None else -1
        return [f for i, f in enumerate(self.orchestrations) if i != phase]

    def name(self, kind: TaskKind, callable_id: int, level: int) -> str:
        """What errors and traces call callable `callable_id` of `kind` on a level-`level` Worker."""
        if kind == TaskKind.NEXT_LEVEL:
            if level > 3:
                return callable_name(self.orchestrations[callable_id])
            return self.chip[callable_id].orchestration
        return callable_name(self.sub[callable_id])


class PathCallable:
    """A callable registered by import path ("pkg.module:fn"); resolved at init() in each process."""

    def __init__(self, path: str):
        module, sep, name = path.partition(":")
        parts = [*module.split("."), *name.split(".")]
        if not sep or not module or not name or not all(p.isidentifier() for p in parts):
            raise ValueError(f"Worker.register: {path!r} is not an import path of the form 'pkg.module:fn'")
        self.path = path
        self.__qualname__ = path
        self._fn: Optional[Callable[..., Any]] = None

    def resolve(self) -> Callable[..., Any]:
        if self._fn is None:
            self._fn = resolve_path(self.path)
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"PathCallable({self.path!r})"


def resolve_path(path: str) -> Callable[..., Any]:
    """The callable at 'pkg.module:qual.name' ('__main__' is the running script);
    ImportError / AttributeError / TypeError saying what is missing."""
    module_name, _, qualname = path.partition(":")
    module = sys.modules["__main__"] if module_name == "__main__" else importlib.import_module(module_name)
    target: Any = module
    for part in qualname.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{path!r} is {type(target).__name__}, not a callable")
    fn: Callable[..., Any] = target
    return fn


def path_of(fn: Callable[..., Any]) -> str:
    """The import path another host finds `fn` by; ValueError for a closure or a lambda."""
    if isinstance(fn, PathCallable):
        return fn.path
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        raise ValueError(
            f"{qualname or fn!r} cannot be named on another host (a closure, a lambda or a callable "
            "object); a remote Worker runs callables registered by import path ('pkg.module:fn') or "
            "defined at module level"
        )
    return f"{module}:{qualname}"


def resolve_all(callables: Sequence[Callable[..., Any]]) -> None:
    """Resolves every PathCallable; RuntimeError naming the path otherwise."""
    for fn in callables:
        if isinstance(fn, PathCallable):
            try:
                fn.resolve()
            except Exception as e:  # noqa: BLE001 - reported with the path
                raise RuntimeError(f"cannot resolve {fn.path!r}: {type(e).__name__}: {e}") from None


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
            raise TypeError(
                f"Worker.register: {name} cannot be sent to the sub-workers, which init() already "
                f"started: pickle cannot carry it ({type(e).__name__}: {e}); register a module-level "
                "function, or its import path 'pkg.module:fn'"
            ) from None
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
