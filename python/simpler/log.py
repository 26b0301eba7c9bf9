"""The `simpler` logger: what a Worker does that a user may want on record.

Everything the runtime reports outside of exceptions goes through the standard
`logging` module under the logger named "simpler" (children below it, e.g.
"simpler.remote"), never through print():

- INFO: a Worker's children started (how many, their pids); a submit refused
  (the ValueError the caller gets, logged as it is raised); a run that failed.
- WARNING: a child lost (killed, crashed, timed out, a remote rank silent), as
  soon as the Worker that owns it finishes its next run or closes; a remote
  rank lost at close.

No handler is installed: with none configured, Python prints WARNING and above
to stderr (logging.lastResort), so a lost child is seen by default and INFO is
not. `logging.basicConfig(level=logging.INFO)` shows everything; a handler on
logging.getLogger("simpler") routes it anywhere.
"""

from __future__ import annotations

import logging
import threading
from typing import List, Protocol

logger = logging.getLogger("simpler")


class _Core(Protocol):
    @property
    def lost_count(self) -> int: ...

    def child_status(self) -> List[str]: ...

    def child_pids(self) -> List[int]: ...


class ChildWatch:
    """Logs one Worker's children: their start, then each loss once.

    A loss is noticed through the engine's lost-children counter, read without
    a lock after each run (one integer comparison on the hot path); only when it
    moved are the children's statuses fetched and the new losses logged."""

    def __init__(self) -> None:
        self._lost_seen = 0
        self._reported: set[str] = set()
        self._lock = threading.Lock()  # run() and the submit completion thread both check

    def started(self, core: _Core, path: str, what: str) -> None:
        if logger.isEnabledFor(logging.INFO):
            pids = core.child_pids()
            logger.info("%s: started %s%s", path, what, f" (pids {', '.join(map(str, pids))})" if pids else "")

    def check(self, core: _Core, path: str) -> None:
        """Logs every child of `path`'s Worker lost since the last check (WARNING)."""
        lost = core.lost_count
        if lost == self._lost_seen:
            return
        with self._lock:
            self._lost_seen = lost
            for status in core.child_status():
                name, _, state = status.partition(": ")
                if state.startswith("lost") and name not in self._reported:
                    self._reported.add(name)
                    logger.warning("%s: %s %s", path, name, state)
