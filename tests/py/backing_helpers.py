"""Helpers for the backing tests: run a function in a forked child that always
leaves through os._exit, and list this process's shm objects."""

import os
import traceback


def run_in_child(fn) -> int:
    """Runs fn() in a forked child; returns its exit code (fn's int return value,
    0 for None, 99 when it raised). The child is always reaped."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            rc = fn()
            code = 0 if rc is None else int(rc)
        except BaseException:  # noqa: BLE001 - any failure in the child becomes exit code 99
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def assert_no_child_left():
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return
    raise AssertionError(f"a child process is left unreaped (pid {pid})")
