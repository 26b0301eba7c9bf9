"""What a chaos driver needs to see everything a Worker process leaves behind:
it becomes a child subreaper (the Worker's orphans, even one forked the instant
before a kill, are re-parented to it and counted), and as root it re-runs
itself in a private mount namespace with its own tmpfs on /dev/shm, so that
"/dev/shm holds nothing new" is exactly "nothing of ours leaked" on a shared
machine.

The run's own objects and processes: `claim_run_tag()` puts a fresh tag in
SIMPLER_SHM_TAG, which every process the run starts inherits; simpler then
draws every owner nonce of those processes under the tag, so each /dev/shm
name they mint starts with "sp" + the tag (`shm_names()`), and a process whose
environment holds the tag is the run's (`run_processes()`). Another test run,
or a user's program beside it, is never counted as this run's leak."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Callable, List, Optional, Set, TypeVar

PR_SET_CHILD_SUBREAPER = 36
NAMESPACE_MARK = "SIMPLER_CHAOS_NAMESPACE"
RUN_TAG = "SIMPLER_SHM_TAG"
T = TypeVar("T")


def claim_run_tag() -> str:
    """Puts a fresh run tag (4 hex digits no /dev/shm name uses yet) in this
    process's environment, for every process it starts from now on; returns it.
    Call it before this process creates a buffer (its own nonce is drawn once)."""
    in_use = {n[2:6] for n in os.listdir("/dev/shm") if n.startswith("sp")}
    tag = os.urandom(2).hex()
    while tag in in_use:
        tag = os.urandom(2).hex()
    os.environ[RUN_TAG] = tag
    return tag


def shm_names() -> Set[str]:
    """The /dev/shm objects of this run (every simpler object when no tag was claimed)."""
    tag = os.environ.get(RUN_TAG, "")
    return {n for n in os.listdir("/dev/shm") if n.startswith("sp" + tag)}


def run_processes(exclude: Set[int]) -> List[int]:
    """The live processes whose environment holds this run's tag, but those in
    exclude (a zombie's environment reads empty: it is not counted)."""
    mark = f"{RUN_TAG}={os.environ[RUN_TAG]}".encode()
    found = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        pid = int(d)
        if pid in exclude:
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if mark in f.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue  # gone, or not ours to read
    return found


def process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def live_children() -> List[int]:
    """This process's children that still run (reaping those that exited)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    me = str(os.getpid())
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] not in ("Z", "X"):
            out.append(int(d))
    return out


def wait_until(cond: Callable[[], T], bound_s: float) -> T:
    """Polls cond() until it is falsy or bound_s passed; returns its last value."""
    deadline = time.monotonic() + bound_s
    while True:
        v = cond()
        if not v or time.monotonic() >= deadline:
            return v
        time.sleep(0.02)


def in_private_dev_shm() -> bool:
    """True in the re-run of the driver inside its private /dev/shm."""
    return os.environ.get(NAMESPACE_MARK) == "1"


def rerun_in_private_dev_shm(no_namespace: bool) -> Optional[int]:
    """As root with unshare(1): runs this script again in a new mount namespace
    with a private tmpfs on /dev/shm and returns its exit status; None when this
    process is that run, or the namespace cannot be had (then the caller goes on
    with the machine's /dev/shm)."""
    unshare = shutil.which("unshare")
    if in_private_dev_shm() or no_namespace or os.geteuid() != 0 or not unshare:
        return None
    script = 'mount -t tmpfs -o size=256m tmpfs /dev/shm || exit 125; exec "$@"'
    cmd = [unshare, "-m", "sh", "-c", script, "sh", sys.executable, *sys.argv]
    r = subprocess.run(cmd, env={**os.environ, NAMESPACE_MARK: "1"})
    return None if r.returncode == 125 else r.returncode  # 125: the namespace could not be set up


def become_subreaper() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def reap_leftovers(before: Set[str], bound_s: float) -> tuple:
    """After a Worker process ended: waits up to bound_s for its processes to go
    and its /dev/shm objects to be unlinked, then kills and unlinks what is
    left; returns (the pids left, the shm names left)."""
    left = wait_until(live_children, bound_s)
    for p in left:
        os.kill(p, signal.SIGKILL)
    leaked = wait_until(lambda: sorted(shm_names() - before), bound_s)
    for n in leaked:
        try:
            os.unlink(f"/dev/shm/{n}")
        except FileNotFoundError:
            pass
    return left, leaked
