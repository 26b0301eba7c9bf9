"""Progress of a long run: what a Worker has submitted, finished and is running.

    with simpler.show_progress(w):          # tqdm when installed, else one line on stderr
        w.run(build_many_tiles)

    p = w.progress()                        # a snapshot: Progress
    p.done, p.submitted, p.running          # ['chip 0', 'sub-worker 1']
    p.children['chip 0'].done               # members chip 0 finished

The display samples Worker.progress() from a thread of its own every
`interval` seconds (asleep in between: an idle display costs nothing) and stops
when the block ends, after one last sample. Counts are since init(): the bar's
total is the tasks submitted so far and grows while the orchestration submits.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from typing import IO, Any, Dict, Iterator, List, Optional, Protocol

from simpler.model.arg_checks import check_bool, got


class ProgressSource(Protocol):
    """What show_progress displays: a Worker (anything with its progress() and path)."""

    @property
    def path(self) -> str: ...

    def progress(self) -> "Progress": ...


@dataclass(frozen=True)
class ChildProgress:
    """One child: members it finished (failures included), whether one runs on it now, whether it is gone."""

    done: int
    running: bool
    lost: bool


@dataclass(frozen=True)
class Progress:
    """A consistent snapshot of one Worker's tasks (taken under its engine lock)."""

    submitted: int  # tasks submitted since init()
    unfinished: int  # submitted, not yet finished: queued, waiting for inputs, or running
    lost: int  # children lost since init()
    children: Dict[str, ChildProgress] = field(default_factory=dict)  # by name: 'chip 0', 'sub-worker 1'

    @property
    def done(self) -> int:
        """Tasks finished (succeeded, failed or poisoned)."""
        return self.submitted - self.unfinished

    @property
    def running(self) -> List[str]:
        """The children a task runs on now."""
        return [name for name, c in self.children.items() if c.running]

    def line(self) -> str:
        """'1200/5000 tasks done · running chip 0, sub-worker 1 · chip 0 600 · chip 1 598 · sub-worker 0 2'."""
        parts = [f"{self.done}/{self.submitted} tasks done"]
        running = self.running
        parts.append(f"running {', '.join(running)}" if running else "idle")
        parts.extend(f"{name} {c.done}{' (lost)' if c.lost else ''}" for name, c in self.children.items())
        return " · ".join(parts)


def snapshot(raw: Dict[str, Any]) -> Progress:
    """Progress from the engine's dict (EngineWorker.progress())."""
    return Progress(
        submitted=raw["submitted"],
        unfinished=raw["unfinished"],
        lost=raw["lost"],
        children={c["name"]: ChildProgress(c["done"], c["running"], c["lost"]) for c in raw["children"]},
    )


class _Display:
    """Where samples go: a tqdm bar, or one line rewritten in place (a terminal) / appended when it changed."""

    def __init__(self, label: str, file: IO[str], use_tqdm: Optional[bool]) -> None:
        self._label = label
        self._file = file
        self._bar: Any = None
        self._last = ""
        if use_tqdm is not False:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]
            except ImportError:
                if use_tqdm:
                    raise RuntimeError(
                        "show_progress(use_tqdm=True): tqdm is not installed (pip install tqdm, or leave use_tqdm=None)"
                    ) from None
            else:
                self._bar = tqdm(total=0, desc=label, unit="task", file=file, dynamic_ncols=True, leave=True)
        self._tty = self._bar is None and hasattr(file, "isatty") and file.isatty()

    def show(self, p: Progress) -> None:
        if self._bar is not None:
            self._bar.total = p.submitted
            self._bar.n = p.done
            running = p.running
            self._bar.set_postfix_str(f"running {', '.join(running)}" if running else "idle", refresh=False)
            self._bar.refresh()
            return
        text = f"{self._label}: {p.line()}"
        if text == self._last:
            return
        self._last = text
        self._file.write(f"\r{text}\x1b[K" if self._tty else text + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._tty and self._last:
            self._file.write("\n")
            self._file.flush()


@contextlib.contextmanager
def show_progress(
    worker: ProgressSource, *, interval: float = 0.2, file: Optional[IO[str]] = None, use_tqdm: Optional[bool] = None
) -> Iterator[None]:
    """Shows `worker`'s progress while the block runs: a tqdm bar when tqdm is
    installed (use_tqdm=None), else a line on `file` (default stderr) —
    rewritten in place on a terminal, appended when it changed otherwise.
    Opt-in: nothing is shown without it. The Worker must be initialized."""
    if not (callable(getattr(worker, "progress", None)) and isinstance(getattr(worker, "path", None), str)):
        raise TypeError(f"show_progress.worker: expected a Worker, {got(worker)}")
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0.01 <= interval <= 60:
        raise ValueError(f"show_progress.interval: seconds between samples, from 0.01 to 60 (got {interval!r})")
    if use_tqdm is not None:
        use_tqdm = check_bool("show_progress.use_tqdm", use_tqdm)
    worker.progress()  # refused here (not initialized, closed) before anything is shown
    display = _Display(worker.path, file if file is not None else sys.stderr, use_tqdm)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(interval):
            try:
                display.show(worker.progress())
            except RuntimeError:
                return  # the Worker closed under the display

    thread = threading.Thread(target=sample, name=f"simpler progress {worker.path}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        try:
            display.show(worker.progress())
        except RuntimeError:
            pass  # closed inside the block: the last sample stands
        display.close()
