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


@pytest.fixture(autouse=True)
def no_shm_leak():
    """Every test must leave /dev/shm as it found it."""
    before = _shm_objects()
    yield
    leaked = _shm_objects() - before
    assert not leaked, f"test leaked /dev/shm objects: {sorted(leaked)}"
