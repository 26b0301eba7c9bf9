"""`python -m simpler launch -n K script.py [args]`: runs a program with remote Workers under mpirun.

Every rank runs the same script (simpler.tree.remote): rank 0 is the L4, ranks
1..K-1 serve its remote L3 children. The launcher adds what such a job needs:
- the job survives a rank that dies (Open MPI's recovery mode), so the L4
  reports the lost child instead of mpirun killing every rank;
- MPI's TCP traffic stays on the loopback interface unless the user names
  hosts (--host / --hostfile among --mpirun-arg): nothing listens elsewhere
  unless configured;
- --oversubscribe (a rank per child, whatever the cores), --bind-to none
  (a rank forks a Worker's children, which need every core, not its rank's
  one), and --allow-run-as-root when run as root.
With --isolate every non-zero rank gets its own mount namespace and a private
/dev/shm (unshare -m and a tmpfs, root only) and MPI's shared-memory transport
is off (TCP only): ranks on one machine share nothing but MPI, as on separate
hosts. That is how the tests run.

Rank 0 writes to the file $SIMPLER_LAUNCH_STATUS names: where it runs (host
and pid) when its remote Workers start, each remote rank it lost (with why)
when it closes, and that it has closed its Workers. The launcher prints the lost
ranks and ends the job in bounded time whatever a rank does:
- once rank 0 has closed, mpirun has FINISH_GRACE_S to exit; a rank still
  there then (stopped, hung — one the L4 declared lost) is killed with the job
  (mpirun is terminated, and terminates every rank);
- when rank 0 dies before it closed (killed, crashed) on this host, the other
  ranks have DEATH_GRACE_S to notice and close their Workers, then the job is
  ended the same way.
The exit status is LOST_RANK_STATUS when rank 0 died or lost a remote rank on
the way (recovery mode lets mpirun itself exit 0 then), else mpirun's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence, Tuple

from simpler.tree import remote
from simpler.tree.remote import FINISHED_LINE, RANK0_LINE, STATUS_ENV

LOST_RANK_STATUS = 3
FINISH_GRACE_S = 10.0  # from rank 0's close to the job's end
DEATH_GRACE_S = 5.0  # from rank 0's death to the job's end (a rank notices it within its heartbeat timeout)
TERMINATE_GRACE_S = 10.0  # from SIGTERM to mpirun to SIGKILL
POLL_S = 0.05
_HOST_ARGS = ("--host", "-host", "-H", "--hostfile", "-hostfile", "--machinefile", "-machinefile")
_ISOLATE = 'mount -t tmpfs -o mode=1777 simpler-shm /dev/shm && exec "$@"'


def mpirun_version(mpirun: str) -> Optional[int]:
    """The major version of Open MPI's mpirun (None when it is not Open MPI)."""
    try:
        out = subprocess.run(
            [mpirun, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Open MPI\)? (\d+)\.", out)
    return int(m.group(1)) if m else None


def command(
    n: int, program: Sequence[str], isolate: bool = False, mpirun_args: Sequence[str] = (), python: str = sys.executable
) -> List[str]:
    """The mpirun command line that runs `python program...` on n ranks."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError(
            "simpler launch: mpirun not found; install Open MPI (apt-get install openmpi-bin "
            "libopenmpi-dev) and rebuild simpler"
        )
    if n < 1:
        raise ValueError(f"simpler launch: -n must be at least 1 (got {n})")
    cmd = [mpirun, "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    version = mpirun_version(mpirun)
    cmd += ["--enable-recovery"] if version is not None and version >= 5 else ["--mca", "orte_enable_recovery", "1"]
    if not any(a.split("=")[0] in _HOST_ARGS for a in mpirun_args):
        cmd += ["--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
    if isolate:
        if os.geteuid() != 0:
            raise RuntimeError("simpler launch --isolate: a private /dev/shm per rank needs root (unshare -m)")
        cmd += ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"]
    cmd += ["-x", STATUS_ENV]  # rank 0 may run on another host
    cmd += list(mpirun_args)
    rank_program = [python, *program]
    if not isolate or n == 1:
        return [*cmd, "-n", str(n), *rank_program]
    unshare = shutil.which("unshare") or "unshare"
    return [
        *cmd,
        "-n",
        "1",
        *rank_program,
        ":",
        "-n",
        str(n - 1),
        unshare,
        "-m",
        "--",
        "sh",
        "-c",
        _ISOLATE,
        "sh",
        *rank_program,
    ]


def _alive(pid: int) -> bool:
    """Whether process `pid` of this host runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _read_status(path: str) -> List[str]:
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def _rank0_died(status: List[str]) -> bool:
    """Rank 0 said where it runs, runs on this host, is gone, and never said it closed."""
    if FINISHED_LINE in status:
        return False
    for line in status:
        parts = line.split()
        if parts[0] == RANK0_LINE and len(parts) == 3 and parts[1] == socket.gethostname():
            return not _alive(int(parts[2]))
    return False


def _end(proc: "subprocess.Popen[bytes]") -> int:
    """Terminates mpirun (it terminates every rank: a stopped one too), then kills it."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def supervise(proc: "subprocess.Popen[bytes]", status_path: str) -> Tuple[int, List[str]]:
    """Waits for mpirun, ending the job once rank 0 has closed or died and the
    grace has passed: (mpirun's status, the launcher's own findings)."""
    found: List[str] = []
    deadline = None
    while True:
        try:
            return proc.wait(POLL_S), found
        except subprocess.TimeoutExpired:
            pass
        if deadline is None:
            status = _read_status(status_path)
            if FINISHED_LINE in status:
                deadline = time.monotonic() + FINISH_GRACE_S
                why = f"mpirun had not exited {FINISH_GRACE_S:g} s after rank 0 closed its Workers"
            elif _rank0_died(status):
                deadline = time.monotonic() + DEATH_GRACE_S
                found.append("rank 0 (the L4) died before it closed its Workers (killed or crashed)")
                why = f"rank 0 died {DEATH_GRACE_S:g} s ago"
        elif time.monotonic() >= deadline:
            found.append(f"{why}: the job was ended (every rank still running was killed)")
            return _end(proc), found


def main(n: int, program: Sequence[str], isolate: bool = False, mpirun_args: Sequence[str] = ()) -> int:
    remote.require_mpi("simpler launch")  # every rank loads it: missing here, it fails before mpirun starts
    cmd = command(n, program, isolate, mpirun_args)
    with tempfile.NamedTemporaryFile(prefix="simpler-launch-", suffix=".status") as status:
        proc = subprocess.Popen(cmd, env={**os.environ, STATUS_ENV: status.name})
        try:
            rc, found = supervise(proc, status.name)
        except BaseException:  # Ctrl-C, or the launcher failing: the job goes with it
            _end(proc)
            raise
        lost = [line for line in _read_status(status.name) if not line.startswith("#")]
    for line in lost + found:
        print(f"simpler launch: {line}", file=sys.stderr)
    if found:  # rank 0 died, or the launcher ended the job: mpirun's own status says nothing
        return LOST_RANK_STATUS
    if rc == 0 and lost:
        return LOST_RANK_STATUS
    return rc
