"""One chaos program's Worker process (started by driver.py, one per program):
builds the program's tree of Workers (traced), does its steps, injects its
fault, checks the bytes against the model (model.evaluate, with each op's
outcome from the trace) at every sync and at the end, closes, and reports on
stdout, one JSON object per line:

    {"children": [pid, ...]}                  after init()
    {"check": STEP, "buffers": N}             a check passed
    {"problem": "..."}                        wrong bytes, a dropped dependency, an unexplained failure,
                                              an error that does not name the fault's cause, a task
                                              with some members' RUN events but not all, ...
    {"run": STEP, "outcome": "ok" | "raised" | "interrupted", "error": "..."}
    {"done": TASKS, "seconds": S, "threads_left": N, "fault": KIND, "failed_ops": N}

    python tests/chaos/runner.py SEED [--faults] [--local]
    python -m simpler launch -n RANKS [--isolate] tests/chaos/runner.py SEED [--faults]   (remote children)

Every rank runs this script; rank 0 is the program's top Worker, and rank
j + 1 serves its j-th remote level-3 child from init() on."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sys
import threading
import time
from typing import Dict, List, Optional

import numpy as np

from model import evaluate, start_values
from program import CHIP_OPS, SUB_OPS, Fault, Op, Program, generate
from simpler import DataType, Worker, view_array
from submit_ops import INJECTED, TAGS, Level3, arm_rank_fault, encode, l3_ops, task_args

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "py"))
from worker_helpers import descendants

F32 = DataType.FLOAT32
MPI_THREADS = 2  # Open MPI's threads in rank 0 (its progress thread and PMIx's), alive until MPI_Finalize at exit
THREAD_EXIT_S = 2.0

# What an error a fault caused must say (its cause), by fault kind.
CAUSES = {
    "chip_kill": r"signal 9|CHILD_DIED",
    "sub_kill": r"signal 9|CHILD_DIED",
    "l3_kill": r"signal 9|CHILD_DIED",
    "below_kill": r"signal 9|CHILD_DIED",
    "task_raise": re.escape(INJECTED),
    "chip_fail": r"std\.add_scalar takes",
    "hang": r"TIMED_OUT|timed out|timeout",
    "named_again": r"released",
    "domain_again": r"released",
    "rank_kill": r"rank \d+ \(L4/L3\[\d+\]\) was lost",
    "rank_stop": r"rank \d+ \(L4/L3\[\d+\]\) was lost",
}


def touched_by(fault: Optional[Fault], interrupted: Optional[int]):
    """Whether the fault may make an op (a log entry) fail or not run."""

    def touched(entry: tuple) -> bool:
        op = entry[1]
        if fault is None:
            return False
        members = op.members or [op]
        if fault.kind == "sigint":  # the interrupted run's tasks not yet begun never run
            return entry[2] == interrupted
        if fault.kind == "chip_kill":
            return any(m.kind in CHIP_OPS and m.chip == fault.target for m in members)
        if fault.kind == "sub_kill":
            return any(m.kind in SUB_OPS for m in members)
        if fault.kind in ("l3_kill", "below_kill", "rank_kill", "rank_stop"):
            return any(m.child == fault.child for m in members)
        if fault.kind == "hang":  # the sub-worker that timed out is lost
            return any(m.kind in SUB_OPS for m in members)
        return any(m.fault == fault.kind for m in members)

    return touched


class ProgramRun:
    """The Worker process's state: the Worker, the buffers, the log the model replays."""

    def __init__(self, program: Program):
        self.p = program
        tree = program.tree
        kw = dict(task_timeout=program.task_timeout, trace=True, trace_capacity=1 << 16)
        # Chips wait on each other's lanes (cross-chip conditions) in every local level-3 Worker.
        if tree.level == 3:
            self.w = Worker(
                level=3, num_chips=tree.l3s[0][0], num_sub_workers=tree.l3s[0][1], chip_conditions=True, **kw
            )
        else:
            self.w = Worker(level=4, **kw)
            for child, (chips, subs) in enumerate(tree.l3s):
                if tree.rank(child):
                    self.w.add_remote_workers(1, num_chips=chips, num_sub_workers=subs)
                else:
                    self.w.add_worker(Worker(level=3, num_chips=chips, num_sub_workers=subs, chip_conditions=True))
        self.l3 = Level3(self.w)
        self.l3_ops = self.w.register(l3_ops) if tree.level == 4 else None
        self.bufs: Dict[int, object] = {}
        self.released: Dict[int, object] = {}  # kept: a named_again op names one
        self.pending_releases: List[int] = []
        self.log: List[tuple] = []
        self.runs: Dict[int, dict] = {}  # step -> {"outcome", "error"}
        self.problems: List[str] = []
        self.sigint = {"armed": False, "building": False, "pending": False}
        self.interrupted: Optional[int] = None  # the step whose run() a SIGINT ended

    # -- buffers ----------------------------------------------------------------
    def create(self, b: int) -> None:
        rows, cols = self.p.buffers[b]
        self.bufs[b] = self.w.create_buffer(rows * cols * 4)
        view_array(self.bufs[b].tensor((rows, cols), F32))[...] = start_values(self.p, b)
        self.log.append(("create", b))

    def release(self, b: int) -> None:
        self.released[b] = self.bufs.pop(b)
        self.w.release_buffer(self.released[b])
        self.log.append(("release", b))

    def tensor(self, v):
        buf = self.bufs[v.buf] if v.buf in self.bufs else self.released[v.buf]
        return buf.tensor((v.h, v.w), F32, strides=v.strides(), byte_offset=v.offset() * 4)

    # -- runs -------------------------------------------------------------------
    def orchestration(self, step: int, ops: List[Op]):
        # The views are made now: a future's orchestration runs later, maybe after a release of their buffer.
        made = [
            [(m, [self.tensor(v) for v in m.views], [TAGS[t] for t in m.tags]) for m in op.members or [op]]
            for op in ops
        ]
        releases = list(self.pending_releases)
        self.pending_releases.clear()

        def orch(o, _a, _c) -> None:
            self.sigint["building"] = True
            try:
                # Runs are built in the order they were asked for: every task of the runs before this one has
                # been submitted, and may still be queued or running, when the buffers released here are released.
                for b in releases:
                    self.release(b)
                for op, members in zip(ops, made, strict=True):
                    self.log.append(("op", op, step, self.submit(o, op, members)))
            finally:
                self.sigint["building"] = False
            if self.sigint["pending"]:  # a Ctrl-C that came while the graph was built
                self.sigint["pending"] = False
                raise KeyboardInterrupt

        return orch

    def submit(self, o, op: Op, members) -> list:
        if self.l3_ops is None and op.members:
            return self.l3.submit_group(o, op.kind, [(m.kind, ts, tags, m.param, m.chip) for m, ts, tags in members])
        if self.l3_ops is None:
            return self.l3.submit(o, op.kind, members[0][1], members[0][2], op.param, op.chip, op.fault)
        if op.kind == "chip_group" and len(self.p.tree.l3s) == 2:  # one member on each level-3 child
            return [
                o.submit_next_level_group(
                    self.l3_ops, [task_args(ts, tags, encode([m])) for m, ts, tags in members], workers=[0, 1]
                )
            ]
        return [
            o.submit_next_level(
                self.l3_ops,
                task_args(
                    [t for _, ts, _ in members for t in ts],
                    [t for _, _, tags in members for t in tags],
                    encode([m for m, _, _ in members]),
                ),
                worker=op.child,
            )
        ]

    def on_sigint(self, _sig, _frame) -> None:
        if not self.sigint["armed"]:
            return  # it came after its run ended
        if self.sigint["building"]:
            self.sigint["pending"] = True
            return
        raise KeyboardInterrupt

    # -- checks -----------------------------------------------------------------
    def may_run_after(self, missed: tuple, entry: tuple) -> bool:
        """Within a run, never. Across runs, the documented contract: a failed
        task stops later tasks that need its bytes until its run's failure is
        reported (run() raised, or its future completed), which for a future
        happens on its own, at a moment the program does not choose."""
        return missed[2] != entry[2]

    def statuses(self):
        runs: Dict[object, list] = {}
        members: Dict[object, int] = {}  # a SUBMIT event counts the task's members
        for e in self.w.trace_events():
            if e.phase.name == "RUN":
                runs.setdefault(e.task, []).append(e)
            else:
                members[e.task] = e.members

        def status(entry) -> List[str]:
            outs = []
            for h in entry[3]:
                evs = runs.get(h, [])
                if evs and len(evs) != members.get(h):  # a member with no event: the trace lost what it did
                    n = members.get(h)
                    gap = f"the trace holds {len(evs)} of {n} members' RUN events of {h} ({entry[1].text()})"
                    if gap not in self.problems:
                        self.problems.append(gap)
                if any(not e.ok for e in evs):
                    outs.append("failed")
                else:
                    outs.append("ok" if evs and len(evs) == members.get(h) else "none")
            return outs

        return status

    def check(self, step: int) -> None:
        status = self.statuses()
        out = evaluate(self.p, self.log, status, touched_by(self.p.fault, self.interrupted), self.may_run_after)
        self.problems += [f"step {step}: {x}" for x in out.problems]
        for b, want in out.arrays.items():
            got = view_array(self.bufs[b].tensor(want.shape, F32))
            known = ~out.unknown[b]
            bad = np.argwhere(known & ~((got == want) | (np.isnan(got) & np.isnan(want))))
            if len(bad):
                r, c = (int(x) for x in bad[0])
                self.problems.append(
                    f"step {step}: wrong bytes: buffer {b} element ({r}, {c}): {got[r, c]} != "
                    f"{want[r, c]} ({len(bad)} elements differ)"
                )
        print(json.dumps({"check": step, "buffers": len(out.arrays)}), flush=True)

    def check_runs(self) -> int:
        """Every run's outcome against its ops' outcomes and the fault; the number of ops that failed or did not run."""
        status, fault = self.statuses(), self.p.fault
        missed = 0
        for step, rec in sorted(self.runs.items()):
            ops = self.p.steps[step].ops
            logged = [e for e in self.log if e[0] == "op" and e[2] == step]
            not_ok = [e[1].text() for e in logged if any(t != "ok" for t in status(e))]
            missed += len(not_ok) + len(ops) - len(logged)
            if rec["outcome"] == "ok" and (not_ok or len(logged) != len(ops)):
                self.problems.append(f"run of step {step} completed although {not_ok or 'an op'} did not run right")
            if rec["outcome"] == "raised":
                cause = CAUSES.get(fault.kind) if fault else None
                if cause is None or not re.search(cause, rec["error"]):
                    self.problems.append(
                        f"run of step {step} raised without naming the fault's cause "
                        f"({fault.kind if fault else 'no fault'}): {rec['error']}"
                    )
                elif fault.kind in ("task_raise", "chip_fail", "hang") and not re.search(r"task \d+", rec["error"]):
                    self.problems.append(f"run of step {step} raised without naming the task: {rec['error']}")
            for e in logged:
                if e[1].fault in ("task_raise", "chip_fail", "hang") and status(e) != ["failed"]:
                    self.problems.append(f"the {e[1].fault} op {e[1].text()} did not fail ({status(e)})")
            for op in ops:
                if op.fault in ("named_again", "domain_again") and rec["outcome"] != "raised":
                    self.problems.append(f"the {op.fault} op {op.text()}: its run did not raise")
        return missed


def main() -> int:
    seed, faults = int(sys.argv[1]), "--faults" in sys.argv[2:]
    program = generate(seed, faults=faults)
    if "--local" in sys.argv[2:]:  # no MPI here: the remote children are local ones
        program.tree.remote = 0
    fault = program.fault
    threads_before = len(os.listdir("/proc/self/task"))
    t0 = time.monotonic()
    pr = ProgramRun(program)
    w = pr.w
    signal.signal(signal.SIGINT, pr.on_sigint)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    if fault and fault.kind in ("rank_kill", "rank_stop") and rank == program.tree.rank(fault.child):
        arm_rank_fault(fault.kind, fault.delay)
    w.init()  # on a remote rank: serves its level-3 child until rank 0 closes, then exits
    print(json.dumps({"children": w.child_pids()}), flush=True)
    futures: Dict[int, object] = {}
    kill_timer: Optional[threading.Timer] = None

    def start_kill() -> threading.Timer:
        pick = random.Random(f"victim {seed}")
        if fault.kind == "chip_kill":
            victim = w.child_pids()[fault.target]
        elif fault.kind == "sub_kill":
            victim = w.child_pids()[program.tree.l3s[0][0] + fault.target]
        elif fault.kind == "l3_kill":
            victim = w.child_pids()[fault.child]
        else:  # below_kill: a chip or sub-worker of the level-3 child (or the child itself when it has none)
            pid = w.child_pids()[fault.child]
            victim = pick.choice(descendants(pid) or [pid])
        t = threading.Timer(fault.delay, os.kill, (victim, signal.SIGKILL))
        t.start()
        return t

    def settle() -> None:
        for s, f in futures.items():
            try:
                f.result()
                pr.runs[s] = {"outcome": "ok", "error": ""}
            except Exception as e:  # noqa: BLE001 - a run's failure is checked, not raised
                pr.runs[s] = {"outcome": "raised", "error": " ".join(f"{type(e).__name__}: {e}".split())}
        futures.clear()
        if pr.interrupted is not None:  # tasks of the interrupted run a child had begun: the next run waits for them
            w.run(lambda o, a, c: None)

    for b in range(len(program.buffers)):
        if not any(s.what == "create" and s.buf == b for s in program.steps):
            pr.create(b)
    for i, step in enumerate(program.steps):
        if step.what == "run":
            if kill_timer is None and fault and fault.kind in ("chip_kill", "sub_kill", "l3_kill", "below_kill"):
                kill_timer = start_kill()
            orch = pr.orchestration(i, step.ops)
            if step.future:
                futures[i] = w.submit(orch)
                continue
            timer = None
            try:  # armed inside: the KeyboardInterrupt may come at once
                if fault and fault.kind == "sigint" and fault.step == i:
                    pr.sigint["armed"] = True
                    timer = threading.Timer(fault.delay, os.kill, (os.getpid(), signal.SIGINT))
                    timer.start()
                w.run(orch)
                pr.runs[i] = {"outcome": "ok", "error": ""}
            except KeyboardInterrupt:
                pr.runs[i] = {"outcome": "interrupted", "error": ""}
                pr.interrupted = i
            except Exception as e:  # noqa: BLE001 - a run's failure is checked, not raised
                pr.runs[i] = {"outcome": "raised", "error": " ".join(f"{type(e).__name__}: {e}".split())}
            finally:
                pr.sigint["armed"] = False
                if timer:
                    timer.cancel()
                    timer.join()  # a thread that just sent its signal may not have exited yet
        elif step.what == "sync":
            settle()
            pr.check(i)
        elif step.what == "release" and step.checked:  # after a sync
            pr.release(step.buf)
        elif step.what == "release":  # by the next run's orchestration, when the runs before it are built
            pr.pending_releases.append(step.buf)
        else:
            pr.create(step.buf)
    settle()
    for b in list(pr.pending_releases):
        pr.release(b)
    pr.pending_releases.clear()
    if kill_timer:
        kill_timer.join()
    pr.check(len(program.steps))
    missed = pr.check_runs()
    for s, rec in sorted(pr.runs.items()):
        print(json.dumps({"run": s, **rec}), flush=True)
    for x in pr.problems:
        print(json.dumps({"problem": x}), flush=True)
    w.close()
    # Open MPI's own threads live until MPI_Finalize at the process's exit. A thread a Python join() returned
    # for may still be on its way out of the kernel for a moment; one still there after THREAD_EXIT_S was left.
    allowed = threads_before + (MPI_THREADS if program.tree.remote else 0)
    deadline = time.monotonic() + THREAD_EXIT_S
    while len(os.listdir("/proc/self/task")) > allowed and time.monotonic() < deadline:
        time.sleep(0.01)
    left = len(os.listdir("/proc/self/task")) - allowed
    print(
        json.dumps(
            {
                "done": program.task_count(),
                "seconds": round(time.monotonic() - t0, 3),
                "threads_left": left,
                "fault": fault.kind if fault else "none",
                "failed_ops": missed,
            }
        ),
        flush=True,
    )
    return 0 if not pr.problems and left <= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
