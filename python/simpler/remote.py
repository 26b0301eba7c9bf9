"""Remote L3 Workers: a level-4 Worker whose children live on other hosts, over Open MPI.

The program runs under mpirun (`python -m simpler launch -n K script.py`):
every rank runs the same script. Rank 0 is the L4; rank j + 1 serves remote
child j, which `Worker.add_remote_workers` declared:

    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=2))          # local: child 0
    w4.add_remote_workers(2, num_chips=2, num_sub_workers=1)  # ranks 1, 2: children 1, 2
    tile = w4.register("mypkg.tiles:tile")               # by import path
    w4.init()      # rank 0: starts every child; ranks 1, 2: serve, then exit
    ...

On a non-zero rank `init()` never returns: the rank builds its L3 Worker from
what rank 0 sent (HELLO), starts it, answers READY, serves every task until
rank 0 closes the L4, and exits the process. Everything before `init()` runs
on every rank, so create buffers and data after it.

Callables cross hosts by name: an orchestration or sub-worker callable is
registered by import path ("pkg.module:fn", resolved in each rank at init())
or is a function whose `module:qualname` is such a path (a closure or a
lambda is refused: it cannot be named on another host); a chip callable by
its orchestration name or its source. A rank where one does not resolve to
the same callable fails rank 0's init() with the rank and the path.

A tensor of a task sent to a remote child travels as a REMOTE_SIDECAR
descriptor (the source's identity); only the bytes of the views the task
reads go there, and those it writes come back before the task is done
(docs/remote.md). A rank that dies fails its task at rank 0 within the
heartbeat timeout, naming the rank, the child and the task.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import socket
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NoReturn, Optional, Sequence

from simpler import _core
from simpler.buffer import forget_imports
from simpler.global_domain import collective_phase
from simpler.launch import FINISHED_LINE, RANK0_LINE, STATUS_ENV
from simpler.log import logger
from simpler.nested import NextLevelServer

_log = logger.getChild("remote")

if TYPE_CHECKING:
    from simpler.worker import Worker

# How long rank 0's init() waits for each remote child's READY (a rank imports
# and forks its chips first), and how long close() waits for its goodbye.
START_TIMEOUT_S = 120.0
CLOSE_TIMEOUT_S = 15.0
DEFAULT_HEARTBEAT_TIMEOUT_S = 2.5

# mpirun's rank and size, read from the environment before MPI starts.
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


def _env_int(names: Sequence[str]) -> Optional[int]:
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.isdigit():
            return int(value)
    return None


def mpi_rank() -> Optional[int]:
    """This process's rank under mpirun, None when it was not started by mpirun."""
    return _env_int(_RANK_VARS)


def mpi_size() -> Optional[int]:
    return _env_int(_SIZE_VARS)


def available() -> bool:
    return bool(_core.remote_available())


def require_mpi(who: str) -> str:
    """Loads MPI in this process (once, and its shim: remote/mpi/mpi_library.h) and says which: the
    shim and the MPI it runs. RuntimeError, prefixed with `who`, when this build has no MPI transport or
    its MPI is not installed here (naming the library, why, and how to get it)."""
    if not available():
        raise RuntimeError(f"{who}: this simpler was built without MPI; remote Workers need Open MPI "
                           "(apt-get install libopenmpi-dev openmpi-bin, then rebuild)")
    try:
        return str(_core.mpi_library())
    except RuntimeError as e:
        raise RuntimeError(f"{who}: {e}") from None


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
        raise ValueError(f"{qualname or fn!r} cannot be named on another host (a closure, a lambda or a callable "
                         "object); a remote Worker runs callables registered by import path ('pkg.module:fn') or "
                         "defined at module level")
    return f"{module}:{qualname}"


def resolve_all(callables: Sequence[Callable[..., Any]]) -> None:
    """Resolves every PathCallable; RuntimeError naming the path otherwise."""
    for fn in callables:
        if isinstance(fn, PathCallable):
            try:
                fn.resolve()
            except Exception as e:  # noqa: BLE001 - reported with the path
                raise RuntimeError(f"cannot resolve {fn.path!r}: {type(e).__name__}: {e}") from None


def _callable_table(top: "Worker") -> Dict[str, List[str]]:
    """What a remote child must know by the same ids: every registered callable, by name. The runtime's own
    collective_phase (registered last by an L4 with global windows, for its local children only) is not compared."""
    return {
        "orchestrations": [path_of(f) for f in top._orchestrations if f is not collective_phase],
        "sub_callables": [path_of(f) for f in top._sub_callables],
        "chip_callables": [c.orchestration for c in top._chip_callables],
    }


def hello_of(top: "Worker", index: int, options: Dict[str, Any], table: Dict[str, List[str]]) -> str:
    """The HELLO text of remote child `index`: its place, its options and the callables (_callable_table)."""
    return json.dumps({"version": 1, "index": index, "level": top.level - 1, "path": top.path, "options": options,
                       **table})


# -- rank 0 -------------------------------------------------------------------
_open_tops: "weakref.WeakSet[Worker]" = weakref.WeakSet()
_exit_hook = threading.Lock()
_exit_hooked = False


def _close_at_exit() -> None:
    for w in list(_open_tops):
        try:
            w.close()
        except Exception:  # noqa: BLE001 - exiting; nothing to report to
            pass
    _launch_status(FINISHED_LINE)  # the launcher ends the job in bounded time from here
    _core.remote_finalize()


def remote_children(top: "Worker", first_index: int, specs: Sequence[Dict[str, Any]],
                    heartbeat_timeout: float) -> Any:
    """Rank 0, at top.init(): the RemoteChildren its EngineWorker serves (MPI starts
    when the first of them starts, after the local forks)."""
    global _exit_hooked
    if not available():
        raise RuntimeError("Worker.init: this simpler was built without MPI; remote Workers need Open MPI "
                           "(apt-get install libopenmpi-dev openmpi-bin, then rebuild)")
    try:
        table = _callable_table(top)  # a callable another host cannot name is refused first
    except ValueError as e:
        raise ValueError(f"Worker.init: {e}") from None
    size = mpi_size()
    need = 1 + len(specs)
    if size is None:
        raise RuntimeError(f"Worker.init: {len(specs)} remote Worker(s) need the program to run under mpirun with "
                           f"{need} ranks: python -m simpler launch -n {need} {sys.argv[0] or 'script.py'}")
    if size < need:
        raise RuntimeError(f"Worker.init: {len(specs)} remote Worker(s) need {need} MPI ranks (rank 0 for "
                           f"{top.path}, one per remote child), but this job has {size}; run it with "
                           f"python -m simpler launch -n {need} ...")
    children = []
    for j, options in enumerate(specs):
        index = first_index + j
        children.append((j + 1, f"{top.path}/L{top.level - 1}[{index}]", hello_of(top, index, options, table)))
    _core.remote_start(heartbeat_timeout)
    with _exit_hook:
        if not _exit_hooked:
            # Where rank 0 runs, so the launcher can tell its death from its end.
            _launch_status(f"{RANK0_LINE} {socket.gethostname()} {os.getpid()}")
            atexit.register(_close_at_exit)
            _exit_hooked = True
    _open_tops.add(top)
    return _core.RemoteChildren(children, first_index, START_TIMEOUT_S, CLOSE_TIMEOUT_S)


def _launch_status(*lines: str) -> None:
    path = os.environ.get(STATUS_ENV)
    if path:
        with open(path, "a") as f:
            f.writelines(line + "\n" for line in lines)


def report_lost(top: "Worker") -> None:
    """Rank 0, at top.close(): a line on stderr (and in the launcher's status
    file) for every remote child whose rank was lost."""
    lines = []
    first = len(top._children)
    for j in range(len(top._remote)):
        why = _core.remote_lost(j + 1)
        if why:
            lines.append(f"rank {j + 1} ({top.path}/L{top.level - 1}[{first + j}]) was lost: {why}")
    if not lines:
        return
    for line in lines:
        _log.warning("%s", line)
    _launch_status(*lines)


def dismiss_extra_ranks(needed: int) -> None:
    """Rank 0, after init(): ranks the job has beyond the remote children are told to exit."""
    size = mpi_size() or 0
    for rank in range(needed, size):
        _core.remote_dismiss(rank)


# -- a remote child's rank ----------------------------------------------------
def _exit(code: int) -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve_rank(top: "Worker", rank: int, heartbeat_timeout: float) -> NoReturn:
    """Rank `rank` (> 0) at top.init(): serves remote child rank - 1 of `top`, then
    exits the process (0 when rank 0 closed the L4, 1 when it was lost)."""
    from simpler.worker import Worker

    _core.remote_start(heartbeat_timeout)
    server = _core.RemoteServer()
    hello_text = server.await_hello()
    if not hello_text:  # rank 0 needs no child here
        _core.remote_finalize()
        _exit(0)
    child: Optional[Worker] = None
    try:
        hello = json.loads(hello_text)
        index = int(hello["index"])
        for fns in (top._orchestrations, top._sub_callables):
            resolve_all(fns)
        mine = _callable_table(top)
        for key in ("orchestrations", "sub_callables", "chip_callables"):
            if mine[key] != hello[key]:
                raise RuntimeError(f"the program registered other {key.replace('_', ' ')} here than on rank 0 "
                                   f"({mine[key]} here, {hello[key]} there); every rank must run the same program")
        child = Worker(level=int(hello["level"]), **hello["options"])
        child._adopt(top, index)
        child.path = f"{hello['path']}/{child.path_name}"
        child._tree_trace = None  # a trace stays on its host
        child.init()
    except BaseException as e:  # noqa: BLE001 - every failure goes to rank 0's init(), which names this rank
        server.ready(str(e) if isinstance(e, RuntimeError) else f"{type(e).__name__}: {e}")
        if child is not None:
            child.close()
        server.bye()
        _core.remote_finalize()
        _exit(1)
    server.ready("")
    run = NextLevelServer(child, top._orchestrations)

    def forget(identities: list) -> None:
        forget_imports(identities)
        if child is not None and child._core is not None and not child._core.closed:
            child._core.forget(identities)

    code = server.serve(run, forget)
    if code != 0:
        _log.warning("%s on rank %d: %s; closing", child.path, rank, server.ended_why)
    child.close()
    server.bye()
    _core.remote_finalize()
    _exit(code)
