"""A Worker's run as a timeline: Chrome Trace Event Format JSON (open it in
https://ui.perfetto.dev or chrome://tracing) and the intervals tests compare.

    w = Worker(level=3, num_sub_workers=2, trace=True)
    ...
    w.run(orch)
    w.write_trace("run.json")             # one lane per chip and per sub-worker
    spans = intervals(w.trace_events())   # RUN intervals, earliest first

Every timestamp is parent-side, in time.monotonic_ns() nanoseconds (the engine
stamps them on steady_clock, the same clock): a task's SUBMIT is when the
engine accepted it; a member's RUN interval runs from publishing it to its
child's mailbox to collecting its result, so it contains the child's own run
plus the wake-up latency of the thread driving the lanes (microseconds on an idle machine). Two
RUN intervals that do not overlap ran one after the other.

This module only reshapes events; the recording is src/simpler/engine/trace.h.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

from simpler._core import ChildKind, ChildRef, TaskHandle, TaskKind, TraceEvent, TracePhase

SUBMIT_TID = 0  # the lane of submit instants; then one lane per child, kind by kind (chips first)


@dataclass(frozen=True)
class Interval:
    """One member's RUN interval: published to its child .. result collected (ns)."""

    task: TaskHandle
    member: int
    lane: str
    kind: TaskKind
    callable: int
    start_ns: int
    end_ns: int
    ok: bool
    error: str

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    def overlaps(self, other: "Interval") -> bool:
        """True when the two intervals share some time (touching ends do not)."""
        return self.start_ns < other.end_ns and other.start_ns < self.end_ns


def intervals(events: Iterable[TraceEvent]) -> List[Interval]:
    """The RUN events as Intervals, ordered by start time."""
    out = [Interval(e.task, e.member, e.child.name(), e.kind, e.callable, e.start_ns, e.end_ns,
                    e.ok, e.error)
           for e in events if e.phase == TracePhase.RUN]
    out.sort(key=lambda i: (i.start_ns, i.task.id, i.member))
    return out


def _us(ns: int) -> float:
    return ns / 1000.0


def chrome_trace(events: Iterable[TraceEvent], callable_names: Optional[Mapping[Tuple[TaskKind, int], str]] = None,
                 *, num_chips: int = 0, num_sub_workers: int = 0, dropped: int = 0,
                 process_name: str = "simpler Worker", pid: Optional[int] = None) -> dict:
    """The events as a Chrome Trace Event Format object ({"traceEvents": [...]}).

    One process (`pid`, default this process's id) with one thread per lane:
    "submit" (tid 0: an instant per accepted task), then "chip i" and
    "sub-worker j" (a complete "X" slice per member run, named after its
    callable). Each task's wait from submit to its first publish is an async
    "queued" slice. ts and dur are microseconds (floats) from the earliest event.
    """
    events = list(events)
    names = dict(callable_names or {})
    pid = os.getpid() if pid is None else pid
    counts = {ChildKind.CHIP: num_chips, ChildKind.SUB_WORKER: num_sub_workers}
    for e in events:
        if e.phase == TracePhase.RUN:
            counts[e.child.kind] = max(counts.get(e.child.kind, 0), e.child.index + 1)
    origin = min((e.start_ns for e in events), default=0)
    # One lane per child, kind by kind in ChildKind order, each named by ChildRef.name().
    children = [ChildRef(k, i) for k in sorted(counts, key=lambda k: k.value) for i in range(counts[k])]
    tids = {c: SUBMIT_TID + 1 + n for n, c in enumerate(children)}

    def callable_name(kind: TaskKind, callable_id: int) -> str:
        return names.get((kind, callable_id), f"callable {callable_id}")

    out: List[dict] = [{"ph": "M", "name": "process_name", "pid": pid, "tid": SUBMIT_TID,
                        "args": {"name": process_name}}]
    lanes = [(SUBMIT_TID, "submit")] + [(tids[c], c.name()) for c in children]
    for t, name in lanes:
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": name}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t, "args": {"sort_index": t}})

    submitted: Dict[TaskHandle, TraceEvent] = {}
    first_publish: Dict[TaskHandle, int] = {}
    for e in events:
        if e.phase == TracePhase.SUBMIT:
            submitted[e.task] = e
            out.append({"ph": "i", "s": "t", "name": f"submit {e.task.name()}", "cat": "submit", "pid": pid,
                        "tid": SUBMIT_TID, "ts": _us(e.start_ns - origin),
                        "args": {"task": e.task.id, "run": e.task.run, "callable": callable_name(e.kind, e.callable),
                                 "kind": e.kind.name, "members": e.members}})
            continue
        first_publish[e.task] = min(first_publish.get(e.task, e.start_ns), e.start_ns)
        args = {"task": e.task.id, "run": e.task.run, "member": e.member, "callable": callable_name(e.kind, e.callable),
                "callable_id": e.callable, "kind": e.kind.name, "ok": e.ok}
        if not e.ok:
            args["error"] = e.error
        if e.task in submitted:
            args["queued_us"] = _us(e.start_ns - submitted[e.task].start_ns)
        out.append({"ph": "X", "name": callable_name(e.kind, e.callable), "cat": e.child.kind.name.lower(),
                    "pid": pid, "tid": tids[e.child], "ts": _us(e.start_ns - origin), "dur": _us(e.end_ns - e.start_ns),
                    "args": args})

    for task, s in submitted.items():
        if task not in first_publish:
            continue
        common = {"cat": "queue", "name": f"queued {task.name()}", "id": task.id, "pid": pid, "tid": SUBMIT_TID}
        out.append({**common, "ph": "b", "ts": _us(s.start_ns - origin)})
        out.append({**common, "ph": "e", "ts": _us(first_publish[task] - origin)})

    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"origin_monotonic_ns": origin, "dropped_events": dropped}}


def write_chrome_trace(path: str | os.PathLike[str], trace: dict) -> None:
    """Writes a chrome_trace() object as JSON to `path`."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(trace, f)
