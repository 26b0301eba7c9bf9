"""What an idle remote L3 costs: the CPU time its rank's process (the server,
its heartbeat thread and MPI) takes while no task comes, against the same for
an idle local L3 child of the same L4 in the same run.

    python -m simpler launch -n 2 --isolate benchmarks/bench_remote_idle.py [--seconds 5]

Every rank runs this script (rank 1 serves the remote child). After one task on
each child, rank 0 samples utime + stime of both children's processes over the
window and prints the share of one core each took.
"""

import argparse
import os
import tempfile
import time

from simpler import TaskArgs, Worker

PID_DIR = os.environ.get("SIMPLER_IDLE_PID_DIR", tempfile.gettempdir())


def note_pid(o, args, cfg):
    """L3 orchestration: says which process serves this child."""
    with open(os.path.join(PID_DIR, f"simpler-idle-{args.scalar(0)}-{o.worker.path_name}"), "w") as f:
        f.write(str(os.getpid()))


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=5.0)
opts = parser.parse_args()

w4 = Worker(level=4)
w4.add_worker(Worker(level=3, num_chips=1))
w4.add_remote_workers(1, num_chips=1)
NOTE = w4.register(note_pid)
w4.init()
tag = os.getpid()


def orch(o, _a, _c):
    for i in range(2):
        ta = TaskArgs()
        ta.add_scalar(tag)
        o.submit_next_level(NOTE, ta, worker=i)


w4.run(orch)
pids = {}
for name in ("L3[0]", "L3[1]"):
    path = os.path.join(PID_DIR, f"simpler-idle-{tag}-{name}")
    with open(path) as f:
        pids[name] = int(f.read())
    os.unlink(path)
time.sleep(1.0)
before = {n: cpu_seconds(p) for n, p in pids.items()}
t0 = time.monotonic()
time.sleep(opts.seconds)
elapsed = time.monotonic() - t0
share = {n: (cpu_seconds(p) - before[n]) / elapsed for n, p in pids.items()}
w4.close()
print(
    f"idle for {elapsed:.1f} s: local L3 (L3[0]) {100 * share['L3[0]']:.2f} % of a core, "
    f"remote L3 (L3[1], rank 1) {100 * share['L3[1]']:.2f} % of a core; load average {os.getloadavg()}"
)
