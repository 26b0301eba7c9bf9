"""The `simpler` logger: what a Worker does that a user may want on record.

Everything the runtime reports outside of exceptions goes through the standard
`logging` module under the logger named "simpler" (children below it, e.g.
"simpler.tree.remote"), never through print():

- INFO: a Worker's children started (how many, their pids); a submit refused
  (the ValueError the caller gets, logged as it is raised); a run that failed.
- WARNING: a child lost (killed, crashed, timed out, a remote rank silent), as
  soon as the Worker that owns it finds it, and each Worker above it as soon as
  the loss reaches it (a next-level Worker child reports what it lost below it
  up the tree: "worker 0: usable; lost below it: chip 1: lost (...)"); a remote
  rank lost at close.

No handler is installed: with none configured, Python prints WARNING and above
to stderr (logging.lastResort), so a lost child is seen by default and INFO is
not. `logging.basicConfig(level=logging.INFO)` shows everything; a handler on
logging.getLogger("simpler") routes it anywhere.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Callable, List, Optional, Protocol

from simpler._core import ChildStatus, close_status_channel, wait_status_channel

logger = logging.getLogger("simpler")


class _Core(Protocol):
    @property
    def lost_count(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def child_states(self) -> List[ChildStatus]: ...

    def child_pids(self) -> List[int]: ...

    @property
    def status_channel(self) -> int: ...


class ChildWatch:
    """Logs one Worker's children: their start, then each loss once.

    A thread (follow()) sleeps in the engine until a child is lost here or
    below a next-level child, and logs it then. After each run the engine's
    lost-children counter is read too, without a lock (one integer comparison
    on the hot path); only when it moved are the statuses fetched."""

    def __init__(self) -> None:
        self._lost_seen = 0
        self._reported: set[str] = set()
        self._lock = threading.Lock()  # run(), the submit completion thread and the follower all check
        self._follower: Optional[threading.Thread] = None
        self._channel = 0

    def started(self, core: _Core, path: str, what: str) -> None:
        if logger.isEnabledFor(logging.INFO):
            pids = core.child_pids()
            logger.info("%s: started %s%s", path, what, f" (pids {', '.join(map(str, pids))})" if pids else "")

    def check(self, core: _Core, path: str, changed: bool = False) -> None:
        """Logs every child of `path`'s Worker lost since the last check, and each
        new report of children lost below a child (WARNING). `changed`: the
        statuses changed (read them even when no child of this Worker was lost)."""
        lost = core.lost_count
        if lost == self._lost_seen and not changed:
            return
        with self._lock:
            self._lost_seen = lost
            for status in core.child_states():
                name, line = status.child.name(), str(status)
                if status.lost and name not in self._reported:
                    self._reported.add(name)
                    logger.warning("%s: %s lost (%s)", path, name, status.why)
                elif status.below_lost > 0 and line not in self._reported:
                    self._reported.add(line)  # each new report once: "worker 0: usable; lost below it: ..."
                    logger.warning("%s: %s", path, line)

    def follow(self, core_of: Callable[[], Optional[_Core]], channel: int, path: str) -> None:
        """Logs each loss as the engine finds it, from a daemon thread that sleeps
        in the engine (the GIL released) on the Worker's status channel until
        the statuses change or the Worker closes. The thread holds the channel's
        id and `core_of` (which must not keep the Worker alive), so a Worker
        dropped without close() is still collected. Start it after the Worker
        forked its children."""

        def run() -> None:
            seen = 0
            while True:
                moved = wait_status_channel(channel, seen)
                core = core_of() if moved is not None else None
                if moved is None or core is None or core.closed:
                    return
                seen = moved
                self.check(core, path, changed=True)
                del core

        # A thread still waiting when the interpreter goes would be ended inside
        # C++ (std::terminate): at exit the channel closes and the thread returns first.
        self._channel = channel
        atexit.register(self.stop)

        self._follower = threading.Thread(target=run, name=f"simpler {path} losses", daemon=True)
        self._follower.start()

    def stop(self) -> None:
        """Closes the status channel (a no-op once the Worker closed it) and joins the follower."""
        if self._follower is not None:
            atexit.unregister(self.stop)
            close_status_channel(self._channel)
            self._follower.join()
            self._follower = None
