"""A module whose import SIGKILLs every process but the one whose pid is in
SIMPLER_TEST_PARENT_PID: tests/py/test_register_late.py registers
"late_killer:fn" on a running Worker, so each sub-worker dies installing it."""

import os
import signal

if os.environ.get("SIMPLER_TEST_PARENT_PID") != str(os.getpid()):
    os.kill(os.getpid(), signal.SIGKILL)


def fn(args):
    """Never runs in a sub-worker: importing this module killed it."""
