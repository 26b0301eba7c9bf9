"""Running the remote test programs (tests/py/remote_apps/) under the launcher,
and checking what they leave behind.

`run_app(name, n, *args)` runs `python -m simpler launch -n N [--isolate] app.py
args` through this file as a reaper: it becomes a child subreaper (orphans of
the job are re-parented to it, not to init), runs the launcher, then waits up
to LEFTOVER_GRACE_S for every remaining descendant to exit on its own and
kills and names any that does not ("LEFTOVER pid comm" on stderr).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "chaos"))
from isolation import become_subreaper, live_children

APPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "remote_apps")
LEFTOVER_GRACE_S = 10.0


@dataclass
class AppRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def result(self) -> Dict[str, str]:
        """The app's RESULT line as a dict (ok -> 'ok'/'FAILED', then key=value)."""
        m = re.search(r"^RESULT (\S+)(.*)$", self.stdout, re.M)
        assert m, f"no RESULT line\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        out = {"ok": m.group(1)}
        out.update(kv.split("=", 1) for kv in m.group(2).split())
        return out

    @property
    def leftovers(self) -> List[str]:
        return re.findall(r"^LEFTOVER .*$", self.stderr, re.M)


def isolating() -> bool:
    return os.geteuid() == 0


def shm_objects() -> set:
    return {n for n in os.listdir("/dev/shm") if n.startswith("sp")}


def run_app(name: str, n: int, *args: str, timeout: float = 180.0) -> AppRun:
    launch = [sys.executable, "-m", "simpler", "launch", "-n", str(n)]
    if isolating():
        launch.append("--isolate")
    cmd = [sys.executable, os.path.abspath(__file__), *launch, os.path.join(APPS, name), *args]
    # A session of its own: a run that overstays the hang guard goes with its whole process group.
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError(f"{name} did not finish within {timeout} s\nstdout:\n{out}\nstderr:\n{err}") from None
    return AppRun(p.returncode, out, err)


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def main(argv: List[str]) -> int:
    if not become_subreaper():
        print("remote_helpers: cannot become a child subreaper", file=sys.stderr)
    rc = subprocess.call(argv, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    while time.monotonic() < deadline:
        if not live_children():  # reaps those that exited
            return rc
        time.sleep(0.1)
    for pid in live_children():
        print(f"LEFTOVER {pid} {_comm(pid)}", file=sys.stderr)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.2)
    live_children()  # reaps them
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
