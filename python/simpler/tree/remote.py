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
(docs/internals/remote.md). A rank that dies fails its task at rank 0 within the
heartbeat timeout, naming the rank, the child and the task.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import sys
import threading
import weakref
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence

from simpler import _core
from simpler.runtime.callables import CallableTable, path_of, resolve_all
from simpler.runtime.log import logger
from simpler.runtime.state import RuntimeState
from simpler.tree.nested import ChildWorker, NextLevelServer, forget_below

_log = logger.getChild("remote")

# The launcher's status file (python -m simpler launch): its environment variable, and rank 0's two control
# lines, which this module writes and the launcher reads.
STATUS_ENV = "SIMPLER_LAUNCH_STATUS"
RANK0_LINE = "#rank0"  # followed by the host name and the pid
FINISHED_LINE = "#finished"

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
        raise RuntimeError(
            f"{who}: this simpler was built without MPI; remote Workers need Open MPI "
            "(apt-get install libopenmpi-dev openmpi-bin, then rebuild)"
        )
    try:
        return str(_core.mpi_library())
    except RuntimeError as e:
        raise RuntimeError(f"{who}: {e}") from None


def _callable_table(table: CallableTable) -> Dict[str, List[str]]:
    """What a remote child must know by the same ids: every registered callable, by name. The runtime's own
    phase orchestration (registered last by an L4 with global windows, for its local children only) is not
    compared."""
    return {
        "orchestrations": [path_of(f) for f in table.user_orchestrations()],
        "sub_callables": [path_of(f) for f in table.sub],
        "chip_callables": [c.orchestration for c in table.chip],
    }


def hello_of(top: RuntimeState, index: int, options: Dict[str, Any], table: Dict[str, List[str]]) -> str:
    """The HELLO text of remote child `index`: its place, its options and the callables (_callable_table)."""
    return json.dumps(
        {"version": 1, "index": index, "level": top.level - 1, "path": top.path, "options": options, **table}
    )


# -- rank 0 -------------------------------------------------------------------
# How to close each top Worker with remote children still open (weakly: the Worker may be collected first).
_open_tops: "List[weakref.WeakMethod[Callable[[], None]]]" = []
_exit_hook = threading.Lock()
_exit_hooked = False


def _close_at_exit() -> None:
    for ref in list(_open_tops):
        close = ref()
        if close is None:
            continue
        try:
            close()
        except Exception:  # noqa: BLE001 - exiting; nothing to report to
            pass
    _launch_status(FINISHED_LINE)  # the launcher ends the job in bounded time from here
    _core.remote_finalize()


def remote_children(
    top: RuntimeState,
    first_index: int,
    specs: Sequence[Dict[str, Any]],
    heartbeat_timeout: float,
    close: "weakref.WeakMethod[Callable[[], None]]",
) -> Any:
    """Rank 0, at the top Worker's init(): the RemoteChildren its EngineWorker
    serves (MPI starts when the first of them starts, after the local forks);
    `close` closes that Worker at exit if it is still open."""
    global _exit_hooked
    if not available():
        raise RuntimeError(
            "Worker.init: this simpler was built without MPI; remote Workers need Open MPI "
            "(apt-get install libopenmpi-dev openmpi-bin, then rebuild)"
        )
    try:
        table = _callable_table(top.callables)  # a callable another host cannot name is refused first
    except ValueError as e:
        raise ValueError(f"Worker.init: {e}") from None
    size = mpi_size()
    need = 1 + len(specs)
    if size is None:
        raise RuntimeError(
            f"Worker.init: {len(specs)} remote Worker(s) need the program to run under mpirun with "
            f"{need} ranks: python -m simpler launch -n {need} {sys.argv[0] or 'script.py'}"
        )
    if size < need:
        raise RuntimeError(
            f"Worker.init: {len(specs)} remote Worker(s) need {need} MPI ranks (rank 0 for "
            f"{top.path}, one per remote child), but this job has {size}; run it with "
            f"python -m simpler launch -n {need} ..."
        )
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
    _open_tops.append(close)
    return _core.RemoteChildren(children, first_index, START_TIMEOUT_S, CLOSE_TIMEOUT_S)


def _launch_status(*lines: str) -> None:
    path = os.environ.get(STATUS_ENV)
    if path:
        with open(path, "a") as f:
            f.writelines(line + "\n" for line in lines)


def report_lost(top: RuntimeState) -> None:
    """Rank 0, at the top Worker's close(): a line on stderr (and in the launcher's status
    file) for every remote child whose rank was lost."""
    lines = []
    first = len(top.children)
    for j in range(len(top.remote)):
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


def serve_rank(
    top: RuntimeState, rank: int, heartbeat_timeout: float, make_child: Callable[[Dict[str, Any]], ChildWorker]
) -> NoReturn:
    """Rank `rank` (> 0) at the top Worker's init(): serves remote child rank - 1
    of it, the Worker `make_child` makes from rank 0's HELLO, then exits the
    process (0 when rank 0 closed the L4, 1 when it was lost)."""
    _core.remote_start(heartbeat_timeout)
    server = _core.RemoteServer()
    hello_text = server.await_hello()
    if not hello_text:  # rank 0 needs no child here
        _core.remote_finalize()
        _exit(0)
    child: Optional[ChildWorker] = None
    try:
        hello = json.loads(hello_text)
        table = top.callables
        for fns in (table.orchestrations, table.sub):
            resolve_all(fns)
        mine = _callable_table(table)
        for key in ("orchestrations", "sub_callables", "chip_callables"):
            if mine[key] != hello[key]:
                raise RuntimeError(
                    f"the program registered other {key.replace('_', ' ')} here than on rank 0 "
                    f"({mine[key]} here, {hello[key]} there); every rank must run the same program"
                )
        child = make_child(hello)
        child.init()
    except BaseException as e:  # noqa: BLE001 - every failure goes to rank 0's init(), which names this rank
        server.ready(str(e) if isinstance(e, RuntimeError) else f"{type(e).__name__}: {e}")
        if child is not None:
            child.close()
        server.bye()
        _core.remote_finalize()
        _exit(1)
    server.ready("")
    code = server.serve(NextLevelServer(child), forget_below(child.state))
    if code != 0:
        _log.warning("%s on rank %d: %s; closing", child.state.path, rank, server.ended_why)
    child.close()
    server.bye()
    _core.remote_finalize()
    _exit(code)
