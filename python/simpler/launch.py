"""`python -m simpler launch -n K script.py [args]`: runs a program with remote Workers under mpirun.

Every rank runs the same script (simpler.remote): rank 0 is the L4, ranks
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

The exit status is mpirun's when it is non-zero (a rank exited non-zero);
else LOST_RANK_STATUS when the L4 lost a remote rank on the way (recovery mode
lets mpirun itself exit 0 then): rank 0 writes each lost rank, with why, to
the file $SIMPLER_LAUNCH_STATUS names, and the launcher prints them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence

LOST_RANK_STATUS = 3
_HOST_ARGS = ("--host", "-host", "-H", "--hostfile", "-hostfile", "--machinefile", "-machinefile")
_ISOLATE = "mount -t tmpfs -o mode=1777 simpler-shm /dev/shm && exec \"$@\""


def mpirun_version(mpirun: str) -> Optional[int]:
    """The major version of Open MPI's mpirun (None when it is not Open MPI)."""
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Open MPI\)? (\d+)\.", out)
    return int(m.group(1)) if m else None


def command(n: int, program: Sequence[str], isolate: bool = False, mpirun_args: Sequence[str] = (),
            python: str = sys.executable) -> List[str]:
    """The mpirun command line that runs `python program...` on n ranks."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError("simpler launch: mpirun not found; install Open MPI (apt-get install openmpi-bin "
                           "libopenmpi-dev) and rebuild simpler")
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
    cmd += ["-x", "SIMPLER_LAUNCH_STATUS"]  # rank 0 may run on another host
    cmd += list(mpirun_args)
    rank_program = [python, *program]
    if not isolate or n == 1:
        return [*cmd, "-n", str(n), *rank_program]
    unshare = shutil.which("unshare") or "unshare"
    return [*cmd, "-n", "1", *rank_program, ":", "-n", str(n - 1), unshare, "-m", "--", "sh", "-c", _ISOLATE, "sh",
            *rank_program]


def main(n: int, program: Sequence[str], isolate: bool = False, mpirun_args: Sequence[str] = ()) -> int:
    cmd = command(n, program, isolate, mpirun_args)
    with tempfile.NamedTemporaryFile(prefix="simpler-launch-", suffix=".status") as status:
        rc = subprocess.call(cmd, env={**os.environ, "SIMPLER_LAUNCH_STATUS": status.name})
        lost = [line.strip() for line in open(status.name) if line.strip()]
    for line in lost:
        print(f"simpler launch: {line}", file=sys.stderr)
    if rc == 0 and lost:
        return LOST_RANK_STATUS
    return rc
