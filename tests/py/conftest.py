"""Shared fixtures: valid wire values to mutate, and the checks that a test leaves no /dev/shm
object and a test module no process of this run behind."""

import os
import signal
import sys

import pytest

from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    Tensor,
    _core as core,
)

OWNER = bytes.fromhex("a1b2c3d4e5f60718")


def make_identity(buffer_id=7, generation=1):
    return CanonicalIdentity(OWNER, buffer_id, generation)


def shm_descriptor(nbytes=1024, access=AccessMode.READWRITE, name=b"simpler-test"):
    return BufferDescriptor(make_identity(), BackendKind.POSIX_SHM, access, nbytes, name)


def vector_tensor(n=16, dtype=DataType.FLOAT32, nbytes=1024, access=AccessMode.READWRITE):
    return Tensor(shm_descriptor(nbytes, access), (n,), dtype)


# The run's tag (chaos/isolation.py): every process this test run starts inherits it, so the checks
# below count this run's /dev/shm objects and processes and never another run's or a user's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "chaos"))
from isolation import claim_run_tag, process_name, run_processes, shm_names, wait_until  # noqa: E402
from torch_helpers import torch  # noqa: E402, F401 (the fixture: a test that names torch gets it, or skips)

RUN_TAG = claim_run_tag()  # before this process mints, so its own objects carry it too
LEFTOVER_GRACE_S = 10.0


@pytest.fixture(autouse=True)
def no_shm_leak():
    """Every test must leave /dev/shm as it found it (its objects of this run)."""
    before = shm_names()
    yield
    leaked = shm_names() - before
    assert not leaked, f"test leaked /dev/shm objects: {sorted(leaked)}"


def _library_daemons():
    """The processes a library keeps while this process lives and that go with it: multiprocessing's
    resource tracker (multiprocessing.shared_memory starts it) and torch's shm manager (torch's
    file_system sharing strategy starts it)."""
    tracker = getattr(sys.modules.get("multiprocessing.resource_tracker"), "_resource_tracker", None)
    pids = {tracker._pid} if getattr(tracker, "_pid", None) else set()
    for pid in run_processes(set()):
        try:
            if os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "torch_shm_manager":
                pids.add(pid)
        except OSError:
            continue
    return pids


@pytest.fixture(scope="module", autouse=True)
def no_leftover_process():
    """No process of this run outlives the test module that started it (but this process, its own
    shm tracker and a library's daemons): those left after a grace are named, killed and fail the
    module's last test."""
    yield
    keep = {os.getpid(), core.shm_tracker_pid(), *_library_daemons()}
    left = wait_until(lambda: run_processes(keep), LEFTOVER_GRACE_S)
    named = [f"{pid} {process_name(pid)}" for pid in left]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not named, f"processes of this test run outlived their module: {named}"
