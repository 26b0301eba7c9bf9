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
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from simpler._core import ChildKind, ChildRef, TaskHandle, TaskKind, TraceEvent, TracePhase, write_private_file

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
    out = [
        Interval(e.task, e.member, e.child.name(), e.kind, e.callable, e.start_ns, e.end_ns, e.ok, e.error)
        for e in events
        if e.phase == TracePhase.RUN
    ]
    out.sort(key=lambda i: (i.start_ns, i.task.id, i.member))
    return out


def _us(ns: int) -> float:
    return ns / 1000.0


def chrome_trace(
    events: Iterable[TraceEvent],
    callable_names: Optional[Mapping[Tuple[TaskKind, int], str]] = None,
    *,
    num_chips: int = 0,
    num_sub_workers: int = 0,
    dropped: int = 0,
    process_name: str = "simpler Worker",
    pid: Optional[int] = None,
    below: Sequence["ProcessTimeline"] = (),
) -> dict:
    """The events as a Chrome Trace Event Format object ({"traceEvents": [...]}).

    One process (`pid`, default this process's id) with one thread per lane:
    "submit" (tid 0: an instant per accepted task), then "chip i",
    "sub-worker j" and "worker k" (a complete "X" slice per member run, named
    after its callable). Each task's wait from submit to its first publish is
    an async "queued" slice. `below` adds the timelines of the Workers nested
    under this one (each its own process, after this one), on the same clock.
    ts and dur are microseconds (floats) from the earliest event of them all.
    """
    top = ProcessTimeline(
        list(events),
        dict(callable_names or {}),
        process_name,
        os.getpid() if pid is None else pid,
        {ChildKind.CHIP: num_chips, ChildKind.SUB_WORKER: num_sub_workers},
    )
    timelines = [top, *below]
    origin = min((e.start_ns for t in timelines for e in t.events), default=0)
    out: List[dict] = []
    for sort_index, t in enumerate(timelines):
        out += t.chrome_events(origin, sort_index)
    return {
        "traceEvents": out,
        "displayTimeUnit": "ns",
        "otherData": {"origin_monotonic_ns": origin, "dropped_events": dropped},
    }


@dataclass
class ProcessTimeline:
    """One Worker's events, as one process of a Chrome trace."""

    events: List[Any]  # TraceEvent, or anything with its attributes (RecordedEvent)
    names: Dict[Tuple[TaskKind, int], str]
    process_name: str
    pid: int
    counts: Dict[ChildKind, int]

    def chrome_events(self, origin: int, sort_index: int) -> List[dict]:
        pid, events, counts = self.pid, self.events, dict(self.counts)
        for e in events:
            if e.phase == TracePhase.RUN:
                counts[e.child.kind] = max(counts.get(e.child.kind, 0), e.child.index + 1)
        # One lane per child, kind by kind in ChildKind order, each named by ChildRef.name().
        children = [ChildRef(k, i) for k in sorted(counts, key=lambda k: k.value) for i in range(counts[k])]
        tids = {c: SUBMIT_TID + 1 + n for n, c in enumerate(children)}

        def callable_name(kind: TaskKind, callable_id: int) -> str:
            return self.names.get((kind, callable_id), f"callable {callable_id}")

        out: List[dict] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": SUBMIT_TID, "args": {"name": self.process_name}},
            {
                "ph": "M",
                "name": "process_sort_index",
                "pid": pid,
                "tid": SUBMIT_TID,
                "args": {"sort_index": sort_index},
            },
        ]
        lanes = [(SUBMIT_TID, "submit")] + [(tids[c], c.name()) for c in children]
        for t, name in lanes:
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": name}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t, "args": {"sort_index": t}})

        submitted: Dict[TaskHandle, Any] = {}
        first_publish: Dict[TaskHandle, int] = {}
        runs_of: Dict[TaskHandle, Any] = {}  # a one-member task's RUN event
        waits: List[Any] = []  # RUN events that waited on their chip for producers on other chips
        for e in events:
            if e.phase == TracePhase.SUBMIT:
                submitted[e.task] = e
                out.append(
                    {
                        "ph": "i",
                        "s": "t",
                        "name": f"submit {e.task.name()}",
                        "cat": "submit",
                        "pid": pid,
                        "tid": SUBMIT_TID,
                        "ts": _us(e.start_ns - origin),
                        "args": {
                            "task": e.task.id,
                            "run": e.task.run,
                            "callable": callable_name(e.kind, e.callable),
                            "kind": e.kind.name,
                            "members": e.members,
                        },
                    }
                )
                continue
            first_publish[e.task] = min(first_publish.get(e.task, e.start_ns), e.start_ns)
            args = {
                "task": e.task.id,
                "run": e.task.run,
                "member": e.member,
                "callable": callable_name(e.kind, e.callable),
                "callable_id": e.callable,
                "kind": e.kind.name,
                "ok": e.ok,
            }
            if not e.ok:
                args["error"] = e.error
            if getattr(e, "waits_on", ()):  # producers on other chips it waited for on its own chip
                args["waits_on"] = [TaskHandle(t, e.task.run).name() for t in e.waits_on]
                waits.append(e)
            runs_of[e.task] = e
            if e.task in submitted:
                args["queued_us"] = _us(e.start_ns - submitted[e.task].start_ns)
            out.append(
                {
                    "ph": "X",
                    "name": callable_name(e.kind, e.callable),
                    "cat": e.child.kind.name.lower(),
                    "pid": pid,
                    "tid": tids[e.child],
                    "ts": _us(e.start_ns - origin),
                    "dur": _us(e.end_ns - e.start_ns),
                    "args": args,
                }
            )

        for task, s in submitted.items():
            if task not in first_publish:
                continue
            common = {
                "cat": "queue",
                "name": f"queued {task.name()}",
                "id": f"{pid}.{task.id}",
                "pid": pid,
                "tid": SUBMIT_TID,
            }
            out.append({**common, "ph": "b", "ts": _us(s.start_ns - origin)})
            out.append({**common, "ph": "e", "ts": _us(first_publish[task] - origin)})
        # Each such wait as a flow arrow from the producer's RUN to the consumer's.
        for e in waits:
            for t in e.waits_on:
                producer = runs_of.get(TaskHandle(t, e.task.run))
                if producer is None:
                    continue
                flow = {"cat": "waits_on", "name": "waits on", "id": f"{pid}.{t}.{e.task.id}", "pid": pid}
                out.append({**flow, "ph": "s", "tid": tids[producer.child], "ts": _us(producer.start_ns - origin)})
                out.append({**flow, "ph": "f", "bp": "e", "tid": tids[e.child], "ts": _us(e.start_ns - origin)})
        return out


@dataclass(frozen=True)
class RecordedEvent:
    """A TraceEvent read back from a nested Worker's record (same attributes)."""

    phase: TracePhase
    kind: TaskKind
    ok: bool
    member: int
    child: ChildRef
    members: int
    task: TaskHandle
    callable: int
    start_ns: int
    end_ns: int
    error: str
    waits_on: Tuple[int, ...] = ()


def event_record(e: Any) -> dict:
    """A TraceEvent as a JSON-able dict (RecordedEvent.of reads it back)."""
    return {
        "phase": e.phase.value,
        "kind": e.kind.value,
        "ok": e.ok,
        "member": e.member,
        "child": [e.child.kind.value, e.child.index],
        "members": e.members,
        "task": [e.task.id, e.task.run],
        "callable": e.callable,
        "start_ns": e.start_ns,
        "end_ns": e.end_ns,
        "error": e.error,
        "waits_on": list(getattr(e, "waits_on", ())),
    }


def recorded_event(d: dict) -> RecordedEvent:
    return RecordedEvent(
        TracePhase(d["phase"]),
        TaskKind(d["kind"]),
        d["ok"],
        d["member"],
        ChildRef(ChildKind(d["child"][0]), d["child"][1]),
        d["members"],
        TaskHandle(d["task"][0], d["task"][1]),
        d["callable"],
        d["start_ns"],
        d["end_ns"],
        d["error"],
        tuple(d.get("waits_on", ())),
    )


def write_chrome_trace(path: str | os.PathLike[str], trace: dict) -> None:
    """Writes a chrome_trace() object as JSON to `path`: through a temporary made
    by mkstemp beside it, renamed over `path`, so a link planted at that name
    is replaced, never written through. OSError naming what failed."""
    try:
        write_private_file(os.fspath(path), json.dumps(trace).encode())
    except RuntimeError as e:
        raise OSError(f"write_trace: {e}") from None


class TreeTrace:
    """Where the Workers nested under a traced Worker (trace=True or
    record_edges=True) leave their timelines and edges: a directory the top
    Worker makes at init() (removed at its close()); each nested Worker appends
    its events and edges to its own files after every run it makes for its
    parent, so the top's write_trace() shows every level on one clock and
    take_edge_logs_below() every level's edges."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="simpler-trace-")

    def _file(self, path: str) -> str:
        return os.path.join(self.directory, path.replace("/", "_") + ".jsonl")

    def append(
        self,
        path: str,
        pid: int,
        names: Mapping[Tuple[TaskKind, int], str],
        counts: Mapping[ChildKind, int],
        events: Iterable[Any],
    ) -> None:
        """Adds `events` of nested Worker `path` (process `pid`) to its file."""
        record = {
            "path": path,
            "pid": pid,
            "names": [[k.value, i, n] for (k, i), n in names.items()],
            "counts": [[k.value, n] for k, n in counts.items()],
            "events": [event_record(e) for e in events],
        }
        with open(self._file(path), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def append_edges(self, path: str, edges: Iterable[Any], dropped: int = 0) -> None:
        """Adds the edges nested Worker `path` inferred (their repr) to its edge file, and a line
        saying how many it did not keep (its edge_log_capacity) when there were some."""
        with open(self._file(path)[: -len(".jsonl")] + ".edges", "a", encoding="utf-8") as f:
            f.writelines(repr(e) + "\n" for e in edges)
            if dropped:
                f.write(f"({dropped} edges not kept: edge_log_capacity reached)\n")

    def take_edges(self) -> Dict[str, List[str]]:
        """Every nested Worker's edges recorded since the last call, by path; clears them."""
        out: Dict[str, List[str]] = {}
        for name in sorted(os.listdir(self.directory)):
            if name.endswith(".edges"):
                file = os.path.join(self.directory, name)
                with open(file, encoding="utf-8") as f:
                    out[name[: -len(".edges")].replace("_", "/")] = f.read().splitlines()
                os.unlink(file)
        return out

    def timelines(self) -> List[ProcessTimeline]:
        """One ProcessTimeline per nested Worker that recorded something, by
        path. A Worker killed while it appended (SIGKILL, a lost child) may
        leave an empty file or a torn last line: what it wrote whole is kept,
        the rest skipped."""
        out = []
        for name in sorted(n for n in os.listdir(self.directory) if n.endswith(".jsonl")):
            events: List[Any] = []
            header: dict = {}
            with open(os.path.join(self.directory, name), encoding="utf-8") as f:
                for line in f:
                    if not line.endswith("\n"):
                        break  # torn: its writer died mid-write (every record ends with a newline)
                    header = json.loads(line)
                    events += [recorded_event(d) for d in header["events"]]
            if not header:
                continue  # created, nothing written whole
            names = {(TaskKind(k), i): n for k, i, n in header["names"]}
            counts = {ChildKind(k): n for k, n in header["counts"]}
            out.append(ProcessTimeline(events, names, f"simpler Worker {header['path']}", header["pid"], counts))
        return out

    def clear(self) -> None:
        """Forgets the timelines recorded so far (the edges stay until taken)."""
        for name in os.listdir(self.directory):
            if name.endswith(".jsonl"):
                os.unlink(os.path.join(self.directory, name))

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
