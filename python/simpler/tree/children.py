"""A Worker's place in a tree: what add_worker and add_remote_workers check,
and how a child's Worker takes its place after its fork.

A level-N Worker (N >= 4) takes level-(N-1) Workers as its next-level children:
local ones (add_worker, forked by its init()) and, on a level-4 Worker at the
top of its tree, remote ones (add_remote_workers, served by other MPI ranks;
simpler.tree.remote). Every check is made before anything changes.
"""

from __future__ import annotations

import os
from typing import Optional

from simpler.runtime.errors import child_name
from simpler.runtime.state import RuntimeState
from simpler.tree import remote


def check_local_child(parent: RuntimeState, child: RuntimeState, *, taken: Optional[str], owns_buffers: bool) -> None:
    """Why `child` cannot become the next local child of `parent` (ValueError /
    RuntimeError), or nothing; `taken`: the child's repr when it is `parent` or
    a child already."""
    if parent.level == 3:
        raise ValueError(
            "Worker.add_worker: a level-3 Worker's next level is chips (num_chips); Workers are "
            "children of a level-4 or higher Worker"
        )
    if parent.core is not None:
        raise RuntimeError("Worker.add_worker: add children before init() — they are forked at init()")
    if child.level != parent.level - 1:
        raise ValueError(
            f"Worker.add_worker: the children of a level-{parent.level} Worker are level-"
            f"{parent.level - 1} Workers (got a level-{child.level} one)"
        )
    if parent.remote:
        raise RuntimeError(
            "Worker.add_worker: add the local children before add_remote_workers (remote "
            "children take the indices after them)"
        )
    if taken is not None:
        raise ValueError(f"Worker.add_worker: {taken} is already a child of a Worker")
    if child.core is not None:
        raise ValueError(
            "Worker.add_worker: the child was initialised; add it before init() and let this Worker start it"
        )
    if child.callables.has_registrations():
        raise ValueError(
            "Worker.add_worker: the child registered callables of its own; register them on the "
            "top Worker, whose children all know them by the same handles"
        )
    if owns_buffers:
        raise ValueError(
            "Worker.add_worker: the child owns buffers already; create them on the top Worker "
            "(or inside the child's orchestration)"
        )


def check_remote_children(parent: RuntimeState, heartbeat_timeout: Optional[float]) -> Optional[float]:
    """Why `parent` cannot take remote children (ValueError / RuntimeError, or
    MPI that does not load here); else `heartbeat_timeout` checked, in seconds."""
    if parent.level == 3:
        raise ValueError(
            "Worker.add_remote_workers: a level-3 Worker's next level is chips (num_chips); remote "
            "Workers are children of a level-4 or higher Worker"
        )
    if parent.parent is not None:
        raise ValueError(
            f"Worker.add_remote_workers: this Worker is {parent.path}, a child of another Worker; "
            "remote Workers are children of the top Worker (rank 0)"
        )
    if parent.core is not None:
        raise RuntimeError("Worker.add_remote_workers: add children before init() — they start at init()")
    if parent.level != 4:
        raise ValueError(
            f"Worker.add_remote_workers: remote children are level-3 Workers, the children of a "
            f"level-4 Worker (this one is level {parent.level})"
        )
    remote.require_mpi("Worker.add_remote_workers")  # MPI is loaded at run time: missing, it fails here
    if heartbeat_timeout is None:
        return None
    if (
        isinstance(heartbeat_timeout, bool)
        or not isinstance(heartbeat_timeout, (int, float))
        or not 0 < heartbeat_timeout <= 3600
    ):
        raise ValueError(
            f"Worker.add_remote_workers.heartbeat_timeout: seconds, > 0 and at most 3600 (got {heartbeat_timeout!r})"
        )
    return float(heartbeat_timeout)


def adopt(state: RuntimeState, parent: RuntimeState, index: int) -> None:
    """In child process `index` of `parent`, right after its fork: the child's
    Worker (`state`) takes the tree's registrations and its place in the tree."""
    state.pid = os.getpid()
    state.callables = parent.callables
    if parent.global_first_slot and parent.forking_core is not None:
        # This Worker's chips reach the parent's global windows (inherited with this process).
        state.config.inherit_global_windows(parent.forking_core, parent.global_first_slot[index])
    state.path_name = child_name(parent.level, index)
    state.path = f"{parent.path}/{state.path_name}"
    state.tree_trace = parent.tree_trace
    if state.tree_trace is not None:
        # a traced tree traces every level, and records every level's edges when the top does
        state.config.trace = state.config.trace or parent.config.trace
        state.config.record_edges = state.config.record_edges or parent.config.record_edges
