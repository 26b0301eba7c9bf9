"""Shared fixtures: valid wire values to mutate, and a /dev/shm leak check."""

import os

import pytest

from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    Tensor,
)

OWNER = bytes.fromhex("a1b2c3d4e5f60718")


def make_identity(buffer_id=7, generation=1):
    return CanonicalIdentity(OWNER, buffer_id, generation)


def shm_descriptor(nbytes=1024, access=AccessMode.READWRITE, name=b"simpler-test"):
    return BufferDescriptor(make_identity(), BackendKind.POSIX_SHM, access, nbytes, name)


def vector_tensor(n=16, dtype=DataType.FLOAT32, nbytes=1024, access=AccessMode.READWRITE):
    return Tensor(shm_descriptor(nbytes, access), (n,), dtype)


def _shm_objects():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("sp") or "simpler" in n}
    except FileNotFoundError:
        return set()


def _own_prefix():
    """The shm name prefix of this process's owner incarnation ("sp" + nonce)."""
    from simpler import create_buffer

    with create_buffer(1) as b:
        return b.descriptor.body.decode()[:18]


_OWN_PREFIX = _own_prefix()
# Under CI the suite runs alone, so any new object is this suite's leak. On a
# shared development machine other suites create objects concurrently; there
# only names minted by this process are held against it.
_STRICT = os.environ.get("CI", "") not in ("", "0", "false")


@pytest.fixture(autouse=True)
def no_shm_leak():
    """Every test must leave /dev/shm as it found it."""
    before = _shm_objects()
    yield
    leaked = _shm_objects() - before
    if not _STRICT:
        leaked = {n for n in leaked if n.startswith(_OWN_PREFIX)}
    assert not leaked, f"test leaked /dev/shm objects: {sorted(leaked)}"
