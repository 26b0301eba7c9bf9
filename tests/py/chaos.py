"""The chaos driver: RUNS runs of tests/py/chaos_parent.py, each a Worker
process running a random graph with one random fault (a child SIGKILLed, a
task raising, or the Worker process itself SIGKILLed at a random moment).
Every third run is a tree (a level-4 Worker over two level-3 ones).

    python tests/py/chaos.py [--runs N] [--seed S]     (N defaults to $SIMPLER_CHAOS_RUNS or 200)

Every run must end within a bound, either with the right bytes or with an error
naming the failure; after every run no process the Worker started is alive and
/dev/shm holds none of its objects. To see every process the Worker started,
even one forked the instant before a kill, the driver makes itself a child
subreaper (orphans of the Worker are re-parented to it). As root, it re-runs
itself in a private mount namespace with its own tmpfs on /dev/shm, so that
"/dev/shm is empty" is exactly "nothing of ours leaked" on a shared machine;
otherwise it counts the objects that appeared during the run. Prints one line
per failed check and a JSON summary last; exits 1 when a check failed."""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "chaos"))
from isolation import (  # noqa: E402 - tests/chaos is put on the path first
    become_subreaper,
    in_private_dev_shm,
    reap_leftovers,
    rerun_in_private_dev_shm,
    shm_names,
)

PARENT = os.path.join(HERE, "chaos_parent.py")
RUN_BOUND_S = 60.0  # a run that takes longer is a hang
CLEANUP_BOUND_S = 30.0


def one_run(i: int, rng: random.Random, fault: str, shape: str, before: set) -> dict:
    seed = rng.randrange(1 << 30)
    proc = subprocess.Popen([sys.executable, PARENT, str(seed), fault, shape], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=HERE)
    rec = {"run": i, "seed": seed, "fault": fault, "shape": shape}
    try:
        if fault == "parent_kill":
            try:
                proc.wait(rng.uniform(0.0, 2.0))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=RUN_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        rec["problem"] = f"hang: the run did not end within {RUN_BOUND_S} s"
        out = out or ""
    results = [line.split(" ", 3) for line in out.splitlines() if line.startswith("result ")]
    killed = proc.returncode == -signal.SIGKILL and fault == "parent_kill"
    rec["killed"] = killed
    if fault == "parent_kill":
        rec["outcome"] = "killed" if killed else "finished"
        if any(r[1] != "ok" for r in results):
            rec["problem"] = f"a run went wrong before the kill: {results}"
    elif proc.returncode != 0 or not results:
        rec.setdefault("problem", f"the Worker process failed (rc {proc.returncode}): {err[-2000:]}")
    else:
        _, outcome, seconds, *msg = results[-1] + [""]
        rec["outcome"], rec["seconds"], rec["message"] = outcome, float(seconds), msg[0]
        if outcome == "wrong":
            rec["problem"] = f"wrong bytes: {msg[0]}"
        elif outcome == "raised":
            text = msg[0]
            names_task = "task " in text and ("chip " in text or "sub-worker " in text)
            if fault == "task_raise" and not (names_task and "chaos: injected failure" in text):
                rec["problem"] = f"the raised error does not name the task and its cause: {text}"
            names_death = "signal 9" in text and ("chip " in text or "sub-worker " in text or "worker " in text)
            if fault == "child_kill" and not names_death:
                rec["problem"] = f"the raised error does not name the child and its death: {text}"
        elif fault == "task_raise":
            rec["problem"] = "a run with a raising task completed"
    left, leaked = reap_leftovers(before, CLEANUP_BOUND_S)
    if left:
        rec["problem"] = f"processes outlived the run: {left}"
    if leaked:
        rec["problem"] = f"/dev/shm objects outlived the run: {leaked}"
    rec["leaked_processes"], rec["leaked_shm"] = len(left), len(leaked)
    return rec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=int(os.environ.get("SIMPLER_CHAOS_RUNS", "200")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SIMPLER_CHAOS_SEED", "1")))
    ap.add_argument("--no-namespace", action="store_true", help="use the machine's /dev/shm as it is")
    opts = ap.parse_args()
    rc = rerun_in_private_dev_shm(opts.no_namespace)
    if rc is not None:
        return rc
    if not become_subreaper():
        print("chaos: cannot become a child subreaper", file=sys.stderr)
        return 1
    rng = random.Random(opts.seed)
    records = []
    t0 = time.monotonic()
    for i in range(opts.runs):
        fault = rng.choice(["child_kill", "task_raise", "parent_kill"])
        shape = "tree" if i % 3 == 2 else "host"  # every third run: a level-4 Worker over two level-3 ones
        rec = one_run(i, rng, fault, shape, shm_names())
        records.append(rec)
        if "problem" in rec:
            print(f"chaos run {i} (seed {rec['seed']}, {fault}, {shape}): {rec['problem']}", flush=True)
    outcomes: dict = {}
    for r in records:
        key = f"{r['shape']}/{r['fault']}/{r.get('outcome', 'none')}"
        outcomes[key] = outcomes.get(key, 0) + 1
    raised = [r["seconds"] for r in records if r.get("outcome") == "raised"]
    summary = {
        "runs": len(records),
        "seed": opts.seed,
        "private_dev_shm": in_private_dev_shm(),
        "failed_checks": sum(1 for r in records if "problem" in r),
        "outcomes": dict(sorted(outcomes.items())),
        "max_seconds_to_raise": round(max(raised), 4) if raised else None,
        "leaked_processes": sum(r["leaked_processes"] for r in records),
        "leaked_shm_objects": sum(r["leaked_shm"] for r in records),
        "wall_seconds": round(time.monotonic() - t0, 1),
    }
    print(json.dumps(summary), flush=True)
    return 1 if summary["failed_checks"] else 0


if __name__ == "__main__":
    sys.exit(main())
