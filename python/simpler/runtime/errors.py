"""How a failure names where it happened: the path of Workers, chips and
sub-workers from a Worker down to the task that failed.

A child's failure text starts with the path from that child down to where the
failure happened (`L3[0] → chip 1: ...`), and the top Worker's run() error
starts with the whole path (`L4 → L3[0] → chip 1: ...`).
"""

from __future__ import annotations

import re
from typing import Optional

# One step of a failure path: a nested Worker, a chip or a sub-worker.
_STEP = r"(?:L\d+\[\d+\]|chip \d+|sub-worker \d+)"
_PATH = re.compile(rf"{_STEP}(?: → {_STEP})*")
# The engine's failure text (Worker::describe_failure_locked): where the first failed task ran.
_FAILURE = re.compile(
    r"(?:sub )?task \d+ of run \d+ \(callable .*?, member \d+\) on (chip|sub-worker|worker) (\d+) "
    r"failed: (?:[A-Z_]+: )?(.*)",
    re.S,
)


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
    if below is not None and below.group(0).startswith(name) and cause[below.end() :].startswith(": "):
        return below.group(0)
    return name


def with_path(head: str, level: int, message: str) -> str:
    """`message` led by the failure's path from `head` down ('L4 → L3[0] → chip 1: ...')."""
    below = failure_path(level, message)
    return f"{head} → {below}: {message}" if below else f"{head}: {message}"
