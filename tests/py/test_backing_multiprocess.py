"""Backings across fork: for every host backend a child consumer reads the
owner's bytes through its own ImportRegistry; a child's writes through a SHM
backing reach the owner and through a COW backing do not; a stale descriptor is
refused in a consumer; a consumer that attaches and exits leaves the owner's
buffer intact and usable. Every child is reaped and no /dev/shm object is left
(conftest's leak check)."""

import os

import numpy as np
import pytest

from backing_helpers import assert_no_child_left, run_in_child
from simpler.model.buffer import (
    AccessMode,
    BackendKind,
    DataType,
    ImportRefused,
    ImportRegistry,
    create_buffer,
    view_array,
)

HOST_BACKENDS = [
    (BackendKind.POSIX_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_SHM, AccessMode.READWRITE),
    (BackendKind.FORK_COW, AccessMode.READ),
]


@pytest.fixture(autouse=True)
def no_child_left():
    yield
    assert_no_child_left()


@pytest.fixture(params=HOST_BACKENDS, ids=lambda p: p[0].name)
def buf(request):
    backend, access = request.param
    h = create_buffer(64 * 4, access=access, backend=backend)
    np.frombuffer(memoryview(h._owner), dtype=np.float32)[:] = np.arange(64)
    yield h
    h.close()


def test_child_consumer_reads_the_owners_bytes(buf):
    t = buf.tensor((8, 8), DataType.FLOAT32, strides=(1, 8))

    def child():
        reg = ImportRegistry()
        arr = reg.map_arg(t).numpy()
        return 0 if np.array_equal(arr, np.arange(64, dtype=np.float32).reshape(8, 8).T) else 1

    assert run_in_child(child) == 0


def test_child_writes_reach_the_owner_only_through_shared_backings(buf):
    t = buf.tensor((64,), DataType.FLOAT32)

    def child():
        if buf.access == AccessMode.READ:
            # The child's private COW copy: writable memory, never the owner's.
            np.frombuffer(memoryview(buf._owner), dtype=np.float32)[:] = -1
            return 0
        arr = ImportRegistry().map_arg(t).numpy()
        arr[:] = -1
        return 0

    assert run_in_child(child) == 0
    got = view_array(t)
    if buf.backend == BackendKind.FORK_COW:
        np.testing.assert_array_equal(got, np.arange(64))
    else:
        assert (got == -1).all()
    del got


def test_view_array_is_the_same_call_in_the_owner_and_in_a_child(buf):
    t = buf.tensor((4, 4), DataType.FLOAT32, strides=(16, 2), byte_offset=4)
    want = np.arange(64, dtype=np.float32).reshape(4, 16)[:, 1::2][:, :4]

    def child():
        return 0 if np.array_equal(view_array(t), want) else 1

    assert run_in_child(child) == 0
    np.testing.assert_array_equal(view_array(t), want)


def test_consumer_that_attaches_and_exits_leaves_the_owner_intact(buf):
    d = buf.descriptor

    def child():
        ImportRegistry().import_backing(d)
        os._exit(0)  # no cleanup at all

    assert run_in_child(child) == 0
    if buf.backend == BackendKind.POSIX_SHM:
        assert os.path.exists(f"/dev/shm/{buf.shm.name}")
    np.testing.assert_array_equal(view_array(buf.tensor((64,), DataType.FLOAT32)), np.arange(64))
    if buf.access != AccessMode.READ:
        v = view_array(buf.tensor((64,), DataType.FLOAT32))
        v[0] = 99
        assert view_array(buf.tensor((1,), DataType.FLOAT32))[0] == 99
        del v


def test_stale_descriptor_is_refused_in_a_consumer():
    h = create_buffer(64)
    stale = h.descriptor
    h.close()
    h2 = create_buffer(64)
    live = h2.descriptor

    def child():
        reg = ImportRegistry()
        reg.import_backing(live)
        try:
            reg.import_backing(stale)
        except ImportRefused as e:
            msg = str(e)
            return 0 if msg.startswith("STALE_GENERATION") and f"generation {stale.identity.generation}" in msg else 2
        return 1

    try:
        assert run_in_child(child) == 0
    finally:
        h2.close()


def test_released_shm_is_refused_in_a_consumer_naming_the_generation():
    h = create_buffer(64)
    stale = h.descriptor
    h.close()

    def child():
        try:
            ImportRegistry().import_backing(stale)
        except ImportRefused as e:
            return 0 if str(e).startswith("SHM_MISSING") and f"generation {stale.identity.generation}" in str(e) else 2
        return 1

    assert run_in_child(child) == 0


def test_child_closing_its_copy_of_a_buffer_unlinks_nothing():
    h = create_buffer(64)
    name = h.shm.name

    def child():
        h.close()
        return 0

    try:
        assert run_in_child(child) == 0
        assert os.path.exists(f"/dev/shm/{name}")
        assert view_array(h.tensor((1,), DataType.INT8)).shape == (1,)
    finally:
        h.close()


def test_a_forked_child_that_becomes_an_owner_mints_its_own_nonce():
    with create_buffer(64) as parent:
        parent_owner = parent.identity.owner_instance_id
        r, w = os.pipe()

        def child():
            os.close(r)
            with create_buffer(64) as mine:
                os.write(w, mine.identity.owner_instance_id)
            return 0

        rc = run_in_child(child)
        os.close(w)
        child_owner = os.read(r, 8)
        os.close(r)
        assert rc == 0
        assert len(child_owner) == 8 and child_owner != parent_owner
