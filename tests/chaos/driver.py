"""The seeded chaos test of the whole process tree (`./dev chaos`): N random
programs (program.py), program i made from seed S + i, each with one random
fault (--no-faults: none), each run by runner.py in a Worker process of its
own and checked against its NumPy model (model.py).

    python tests/chaos/driver.py [--programs N] [--seed S] [--faults | --no-faults] [--no-namespace]

A program passes when its runner reports no problem (every byte the model
knows is right, every op that failed or did not run was touched by the fault
or needed one that was, every run that raised named the fault's cause, the
fault op failed), no thread left running after close(), and it exits within
RUN_BOUND_S (top_kill: the driver SIGKILLs it at a random moment; what it
reported before must be right); and then no process it started is alive and
/dev/shm holds none of its objects (isolation.py: the driver is a child
subreaper, and as root has a private /dev/shm). Prints one line per program,
then a summary (programs, tasks, trees, faults by kind and how many landed,
failures, wall time), then the summary as one JSON object; every failed
program prints the command that replays it. Exits 1 when a program failed."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List

from isolation import (
    become_subreaper,
    claim_run_tag,
    in_private_dev_shm,
    reap_leftovers,
    rerun_in_private_dev_shm,
    shm_names,
)
from program import Program, generate
from simpler import _core
from simpler.cli.launch import LOST_RANK_STATUS

HERE = os.path.dirname(os.path.abspath(__file__))
REMOTE = _core.remote_available() and shutil.which("mpirun") is not None
RUNNER = os.path.join(HERE, "runner.py")
RUN_BOUND_S = 90.0  # a program that takes longer is a hang (its task_timeout is 20 s, or 1 s for `hang`)
CLEANUP_BOUND_S = 30.0


def describe(p: Program) -> str:
    runs = [s for s in p.steps if s.what == "run"]
    extra = [f"{sum(1 for s in p.steps if s.what == w)} {w}" for w in ("sync", "release", "create")]
    return (
        f"{p.tree.text()}, {len(p.buffers)} buffers, {len(runs)} runs ({sum(s.future for s in runs)} futures), "
        f"{p.task_count()} tasks, " + ", ".join(extra)
    )


def run_program(seed: int, faults: bool) -> Dict:
    """Runs program `seed` in its own Worker process; the record of what it did
    and, under "problem", what went wrong."""
    program = generate(seed, faults=faults)
    fault = program.fault.kind if program.fault else "none"
    rec: Dict = {
        "seed": seed,
        "tasks": program.task_count(),
        "level": program.tree.level,
        "fault": fault,
        "text": describe(program) + (f", fault {fault}" if faults else ""),
    }
    rec["remote"] = program.tree.remote
    cmd = [sys.executable, RUNNER, str(seed), *(["--faults"] if faults else [])]
    if program.tree.remote and not REMOTE:
        cmd.append("--local")  # built without MPI, or no mpirun: its remote children run as local ones
        rec["text"] += " (remote children run locally: no MPI here)"
    elif program.tree.remote:
        launch = [sys.executable, "-m", "simpler", "launch", "-n", str(program.tree.remote + 1)]
        cmd = launch + (["--isolate"] if os.geteuid() == 0 else []) + cmd[1:]  # --isolate: a private /dev/shm per rank
    before = shm_names()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE)
    killed = False
    try:
        if fault == "top_kill":  # the Worker process SIGKILLed at a random moment: importing, forking, running, closing
            try:
                proc.wait(program.fault.delay)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                killed = True
        out, err = proc.communicate(timeout=RUN_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        rec["problem"] = f"hang: the program did not end within {RUN_BOUND_S:.0f} s"
    rec["seconds"] = round(time.monotonic() - t0, 3)
    lines = []
    for line in out.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    done = [x for x in lines if "done" in x]
    problems = [x["problem"] for x in lines if "problem" in x]
    rec["landed"] = (
        killed or bool(done and done[0]["failed_ops"]) or any(x.get("outcome") == "interrupted" for x in lines)
    )
    if "problem" in rec:
        pass
    elif problems:
        rec["problem"] = problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
    elif killed:
        pass  # what it printed before the kill had no problem
    elif proc.returncode == LOST_RANK_STATUS and fault in ("rank_kill", "rank_stop") and done:
        rec["landed"] = True  # the launcher says a rank was lost, as it must
    elif proc.returncode != 0 or not done:
        tail = " ".join(err.split())[-1500:]
        rec["problem"] = f"the Worker process failed (exit status {proc.returncode}): {tail}"
    elif done[0]["threads_left"] > 0:
        rec["problem"] = f"{done[0]['threads_left']} threads still ran after close()"
    rec["checks"] = sum(1 for x in lines if "check" in x)
    left, leaked = reap_leftovers(before, CLEANUP_BOUND_S)
    if left:
        rec.setdefault("problem", f"processes outlived the program: {left}")
    if leaked:
        rec.setdefault("problem", f"/dev/shm objects outlived the program: {leaked}")
    rec["leaked_processes"], rec["leaked_shm"] = len(left), len(leaked)
    return rec


def faults_by_kind(records: List[Dict]) -> Dict[str, list]:
    """{kind: [programs, programs where it landed]} (landed: an op failed or did not run, a run() was
    interrupted, or the Worker process was killed before it ended)."""
    out: Dict[str, list] = {}
    for r in records:
        if r["fault"] != "none":
            k = out.setdefault(r["fault"], [0, 0])
            k[0] += 1
            k[1] += int(r["landed"])
    return dict(sorted(out.items()))


def main() -> int:
    ap = argparse.ArgumentParser(prog="./dev chaos", description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=200, help="how many programs (default 200)")
    ap.add_argument("--seed", type=int, default=1, help="the first program's seed (default 1)")
    ap.add_argument(
        "--faults",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="inject one random fault per program (default: yes)",
    )
    ap.add_argument("--no-namespace", action="store_true", help="use the machine's /dev/shm as it is")
    opts = ap.parse_args()
    rc = rerun_in_private_dev_shm(opts.no_namespace)
    if rc is not None:
        return rc
    if not become_subreaper():
        print("chaos: cannot become a child subreaper", file=sys.stderr)
        return 1
    claim_run_tag()  # the programs' /dev/shm objects are told from everyone else's by it
    t0 = time.monotonic()
    records: List[Dict] = []
    for seed in range(opts.seed, opts.seed + opts.programs):
        rec = run_program(seed, opts.faults)
        records.append(rec)
        verdict = f"FAILED: {rec['problem']}" if "problem" in rec else f"ok, {rec['checks']} checks"
        if opts.faults and "problem" not in rec:
            verdict += ", the fault landed" if rec["landed"] else ", the fault touched nothing"
        print(f"program {seed}: {rec['text']}: {verdict} ({rec['seconds']:.2f} s)", flush=True)
        if "problem" in rec:
            print(
                f"  replay: ./dev chaos --seed {seed} --programs 1{'' if opts.faults else ' --no-faults'}", flush=True
            )
    failed = [r["seed"] for r in records if "problem" in r]
    summary = {
        "programs": len(records),
        "seeds": [opts.seed, opts.seed + opts.programs - 1],
        "tasks": sum(r["tasks"] for r in records),
        "level4_trees": sum(1 for r in records if r["level"] == 4),
        "remote_trees": sum(1 for r in records if r["remote"]),
        "remote_run_locally": 0 if REMOTE else sum(1 for r in records if r["remote"]),
        "faults": faults_by_kind(records),
        "failed": len(failed),
        "failed_seeds": failed,
        "leaked_processes": sum(r["leaked_processes"] for r in records),
        "leaked_shm_objects": sum(r["leaked_shm"] for r in records),
        "private_dev_shm": in_private_dev_shm(),
        "wall_seconds": round(time.monotonic() - t0, 1),
    }
    print(
        f"chaos: {summary['programs']} programs (seeds {opts.seed}..{opts.seed + opts.programs - 1}), "
        f"{summary['tasks']} tasks, {summary['level4_trees']} level-4 trees "
        f"({summary['remote_trees']} with remote level-3 children under mpirun), "
        f"faults {' '.join(f'{k}={v[0]}({v[1]} landed)' for k, v in summary['faults'].items()) or 'none'}; "
        f"{len(failed)} failed, {summary['leaked_processes']} leftover processes, "
        f"{summary['leaked_shm_objects']} leftover /dev/shm objects; {summary['wall_seconds']} s",
        flush=True,
    )
    print(json.dumps(summary), flush=True)
    return 1 if failed or summary["leaked_processes"] or summary["leaked_shm_objects"] else 0


if __name__ == "__main__":
    sys.exit(main())
