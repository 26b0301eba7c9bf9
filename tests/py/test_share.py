"""Bring your own memory: `Worker.share(array_or_tensor)` names the bytes of a
NumPy array or a torch tensor as a buffer without copying them. MAP_SHARED
memory before init() is FORK_SHM and children write it in place; private memory
before init() is FORK_COW, filled by its owner and read by chips and
sub-workers, never written by them; memory in a named POSIX shm object after
init() is POSIX_SHM naming that object. A task's writes land in the user's
object (same data pointer), the buffer keeps the object alive while a task
names it, and every refusal says why and what to do, changing nothing."""

import gc
import mmap
import os
import time
import weakref
from multiprocessing import shared_memory

import numpy as np
import pytest

from simpler import AccessMode, BackendKind, CallConfig, ChipCallable, DataType, TensorArgType, Worker
from simpler.model.buffer import create_buffer
from simpler.model.share import AdoptedTensor
from worker_helpers import args, close_and_check

IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
F32 = DataType.FLOAT32
N = 64


def _fill_sevens(a):
    """Writes 7 into its argument 0 and the address it was handed into argument 1 (uint64)."""
    a.array(0)[:] = 7.0
    a.array(1)[0] = a[0].address


def _total(a):
    """Argument 2 (one float32) = the sum of argument 0; argument 1 only orders the task."""
    a.array(2)[0] = a.array(0).sum()


def _wait_for_file(a):
    """Writes argument 0 once the file named by the bytes of argument 1 exists (bounded at 30 s)."""
    path = bytes(a.array(1)).rstrip(b"\0").decode()
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.005)
    a.array(0)[0] = 1.0


@pytest.fixture
def worker():
    w = Worker(level=3, num_chips=1, num_sub_workers=1, task_timeout=60)
    try:
        yield w
    finally:
        close_and_check(w)


def _register(w):
    return (
        w.register(ChipCallable("std.copy")),
        w.register(_fill_sevens),
        w.register(_total),
        w.register(_wait_for_file),
    )


def test_share_memory_tensor_before_init_is_fork_shm_written_in_place_by_chip_and_sub_worker(worker, torch):
    copy, fill, _total_h, _wait = _register(worker)
    t = torch.zeros(2 * N, dtype=torch.float32).share_memory_()
    src = torch.arange(N, dtype=torch.float32)
    s = worker.share(src)  # private: FORK_COW, read by the chip
    b = worker.share(t)
    addr = worker.alloc_shared_tensor((1,), DataType.UINT64)
    assert isinstance(b, AdoptedTensor) and b.source is t
    assert b.backend == BackendKind.FORK_SHM and b.access == AccessMode.READWRITE
    assert (b.shape, b.dtype, b.nbytes) == ((2 * N,), F32, 2 * N * 4)
    assert b._owner.address == t.data_ptr()  # the buffer's bytes are the tensor's
    assert s.backend == BackendKind.FORK_COW and s.access == AccessMode.READ
    worker.init()
    pointer = t.data_ptr()

    def orch(o, _a, _c):
        o.submit_sub(fill, args((b.tensor((N,)), OUT), (addr.tensor(), OUT)))
        o.submit_next_level(
            copy, args((s.tensor(), IN), (b.tensor((N,), byte_offset=4 * N), OUT)), CallConfig(zero_copy=True), worker=0
        )

    worker.run(orch)
    assert t.data_ptr() == pointer
    assert addr.array()[0] == pointer  # the sub-worker wrote at the tensor's own address
    assert (t[:N] == 7).all() and torch.equal(t[N:], src)


def test_numpy_over_shared_memory_is_fork_shm_before_init_and_posix_shm_after(worker):
    copy, _fill, total, _wait = _register(worker)
    shm_a = shared_memory.SharedMemory(create=True, size=4096 + 256)
    shm_b = shared_memory.SharedMemory(create=True, size=256 + N * 4)
    names = [shm_a.name, shm_b.name]
    try:
        a = np.ndarray((N,), np.float32, buffer=shm_a.buf, offset=256)  # not page-aligned
        a[:] = np.arange(N, dtype=np.float32)
        ba = worker.share(a)
        assert ba.backend == BackendKind.FORK_SHM and ba._owner.address == a.ctypes.data
        out = worker.alloc_shared_tensor((1,), F32)
        order = worker.alloc_shared_tensor((1,), F32)
        worker.init()
        c = np.ndarray((N,), np.float32, buffer=shm_b.buf, offset=256)
        bc = worker.share(c)
        assert bc.backend == BackendKind.POSIX_SHM and bc.shm.name == shm_b.name
        assert (bc.origin, bc.nbytes) == (256, 256 + N * 4)
        assert bc.array().ctypes.data == c.ctypes.data  # the owner's view is the array's bytes

        def orch(o, _a, _c):
            o.submit_sub(total, args((ba.tensor(), IN), (order.tensor(), IN), (out.tensor(), OUT)))
            o.submit_next_level(copy, args((ba.tensor(), IN), (bc.tensor(), OUT)), worker=0)

        worker.run(orch)
        assert out.array()[0] == sum(range(N))
        assert np.array_equal(c, a)  # the chip's write is in the user's array

        worker.run(
            lambda o, _a, _c: o.submit_sub(
                total,
                args((bc.tensor((N // 2,), byte_offset=4 * N // 2), IN), (order.tensor(), IN), (out.tensor(), OUT)),
            )
        )
        assert out.array()[0] == float(c[N // 2 :].sum())
        worker.release_buffer(bc, wait=True)
        worker.release_buffer(ba, wait=True)
        a = c = ba = bc = None  # the arrays export shm.buf: let go of every holder
    finally:
        gc.collect()
        for shm in (shm_a, shm_b):
            shm.close()  # no export of its buffer is left behind: the Buffers let go of the arrays
            shm.unlink()
    assert not any(os.path.exists(f"/dev/shm/{n}") for n in names)


def test_a_plain_array_before_init_is_fork_cow_filled_by_its_owner_and_read_by_chip_and_sub_worker(worker):
    copy, _fill, total, _wait = _register(worker)
    x = np.zeros(1 << 18, np.float32)  # 1 MiB: whole pages inside it are protected in the children
    b = worker.share(x)
    assert b.backend == BackendKind.FORK_COW and b.access == AccessMode.READ
    b.array()[:] = 3.0  # the owner's view is writable whatever the grant
    assert (x == 3).all()
    s = worker.alloc_shared_tensor((N,), F32, access=AccessMode.READ)
    s.array()[:] = 2.0  # so is a READ alloc_shared_tensor's
    out = worker.alloc_shared_tensor((N,), F32)
    total_out = worker.alloc_shared_tensor((1,), F32)
    total_s = worker.alloc_shared_tensor((1,), F32)
    with pytest.raises(ValueError, match="grants READ only"):
        worker.share(np.zeros(4, np.float32), access=AccessMode.READWRITE)
    worker.init()
    with pytest.raises(ValueError, match="READ"):
        args((b.tensor((N,)), OUT))

    def orch(o, _a, _c):
        o.submit_next_level(
            copy,
            args((b.tensor((N,), byte_offset=4096 + 12), IN), (out.tensor(), OUT)),
            CallConfig(zero_copy=True),
            worker=0,
        )
        o.submit_sub(total, args((b.tensor(), IN), (out.tensor(), IN), (total_out.tensor(), OUT)))
        o.submit_sub(total, args((s.tensor(), IN), (out.tensor(), IN), (total_s.tensor(), OUT)))

    worker.run(orch)
    assert (out.array() == 3).all()
    assert total_out.array()[0] == 3.0 * x.size
    assert total_s.array()[0] == 2.0 * N
    assert (x == 3).all()


def test_fork_cow_bytes_the_host_writes_after_init_refuse_the_next_task_instead_of_reading_stale(worker):
    # The children hold FORK_COW bytes as of init(): the host wrote 5.0 and a
    # child read 1.0. Now the write lands in the host, and a task naming the
    # buffer is refused saying why; a buffer the host left alone still runs.
    copy, _fill, total, _wait = _register(worker)
    big = np.full(1 << 18, 1.0, np.float32)  # 1 MiB: its whole pages are write-protected in the host
    small = np.full(8, 1.0, np.float32)  # inside one page: its bytes are compared
    shared = {"big": worker.share(big), "small": worker.share(small)}
    made = create_buffer(N * 4, AccessMode.READ, BackendKind.FORK_COW)  # the runtime's own mapping
    made.array((N,), F32)[:] = 1.0
    shared["made"] = made
    untouched = worker.share(np.full(N, 2.0, np.float32))
    assert all(b.backend == BackendKind.FORK_COW for b in [*shared.values(), untouched])
    out = worker.alloc_shared_tensor((N,), F32)
    sums = worker.alloc_shared_tensor((1,), F32)
    worker.init()

    def reads(b, sub):
        def orch(o, _a, _c):
            if sub:
                o.submit_sub(total, args((b.tensor((8,), F32), IN), (out.tensor(), IN), (sums.tensor(), OUT)))
            else:
                o.submit_next_level(
                    copy, args((b.tensor((8,), F32), IN), (out.tensor((8,)), OUT)), CallConfig(zero_copy=True), worker=0
                )

        return orch

    for b in shared.values():  # unchanged since init(): both kinds of child read them
        worker.run(reads(b, sub=False))
        assert (out.array()[:8] == 1.0).all()
        worker.run(reads(b, sub=True))
        assert sums.array()[0] == 8.0
    big[1 << 17] = 5.0  # a whole page
    small[3] = 5.0
    made.array((N,), F32)[0] = 5.0
    assert big[1 << 17] == 5.0 and small[3] == 5.0 and made.array((N,), F32)[0] == 5.0  # the writes landed
    out.array()[:] = 0.0
    for name, b in shared.items():
        for sub in (False, True):
            with pytest.raises(ValueError, match="wrote this FORK_COW buffer after init") as refused:
                worker.run(reads(b, sub))
            assert "stale" in str(refused.value) and str(b.identity) in str(refused.value), (name, str(refused.value))
    assert (out.array() == 0.0).all()  # nothing ran
    worker.run(reads(untouched, sub=False))
    assert (out.array()[:8] == 2.0).all()
    made.close()


def test_the_buffer_keeps_the_object_alive_while_a_task_names_it(worker, tmp_path):
    _copy, _fill, total, wait = _register(worker)
    x = np.full(N, 2.0, np.float32)
    alive = weakref.ref(x)
    holder = [worker.share(x)]
    view = holder[0].tensor()
    del x
    flag = str(tmp_path / "go").encode() + b"\0"
    path = worker.alloc_shared_tensor((len(flag),), DataType.UINT8)
    path.array()[:] = np.frombuffer(flag, np.uint8)
    hold = worker.alloc_shared_tensor((1,), F32)
    out = worker.alloc_shared_tensor((1,), F32)
    worker.init()
    seen = {}

    def orch(o, _a, _c):
        o.submit_sub(wait, args((hold.tensor(), OUT), (path.tensor(), IN)))
        o.submit_sub(total, args((view, IN), (hold.tensor(), IN), (out.tensor(), OUT)))
        b = holder.pop()
        worker.release_buffer(b)  # the free waits for the queued task
        seen["pending"] = b.free_pending
        del b
        gc.collect()
        seen["alive"] = alive() is not None  # no user reference and no Buffer left: the runtime holds it
        (tmp_path / "go").touch()

    worker.run(orch)
    assert seen == {"pending": True, "alive": True}
    assert out.array()[0] == 2.0 * N
    worker.share(np.zeros(1, np.float32), copy=True)  # any later share() lets go of freed objects
    gc.collect()
    assert alive() is None


def test_after_init_torch_file_system_tensor_is_posix_shm_and_fd_strategy_is_refused(worker, torch):
    _copy, fill, _total, _wait = _register(worker)
    addr = worker.alloc_shared_tensor((1,), DataType.UINT64)
    worker.init()
    fd_tensor = torch.zeros(N).share_memory_()  # file_descriptor strategy: the object is unlinked
    count = len(worker._buffers)
    with pytest.raises(ValueError, match="file_system"):
        worker.share(fd_tensor)
    assert len(worker._buffers) == count
    anon = mmap.mmap(-1, 4096)
    with pytest.raises(ValueError, match="no name any more"):
        worker.share(np.frombuffer(anon, np.float32))
    previous = torch.multiprocessing.get_sharing_strategy()
    torch.multiprocessing.set_sharing_strategy("file_system")
    try:
        t = torch.zeros(N).share_memory_()
    finally:
        torch.multiprocessing.set_sharing_strategy(previous)
    b = worker.share(t)
    assert b.backend == BackendKind.POSIX_SHM
    assert b.array().ctypes.data == t.data_ptr()
    worker.run(lambda o, _a, _c: o.submit_sub(fill, args((b.tensor(), OUT), (addr.tensor(), OUT))))
    assert (t == 7).all()
    worker.release_buffer(b, wait=True)


def test_refusals_name_the_problem_and_change_nothing(worker, torch):
    worker.register(_fill_sevens)
    x = np.zeros((8, 8), np.float32)
    count = len(worker._buffers)
    cases = [
        (lambda: worker.share([1.0, 2.0]), TypeError, "expected a NumPy array or a torch tensor"),
        (lambda: worker.share(x[:, ::2]), ValueError, "not contiguous"),
        (lambda: worker.share(torch.zeros(4, 4).t()), ValueError, "not contiguous"),
        (lambda: worker.share(np.zeros(4, np.complex128)), ValueError, "dtype complex128 has no DataType"),
        (lambda: worker.share(np.zeros(0, np.float32)), ValueError, "has no bytes"),
        (lambda: worker.share(x, access="READ"), TypeError, "Worker.share.access: expected an AccessMode"),
    ]
    for call, exc, words in cases:
        with pytest.raises(exc, match=words):
            call()
    assert len(worker._buffers) == count
    b = worker.share(x)
    with pytest.raises(ValueError, match=f"already \\(part of\\) buffer {b.identity}"):
        worker.share(x[2:])
    s = worker.alloc_shared_tensor((4,), F32)
    with pytest.raises(ValueError, match="already"):
        worker.share(s.array())
    worker.init()
    with pytest.raises(ValueError, match=r"private memory.*copy=True"):
        worker.share(np.zeros(4, np.float32))
    assert len(worker._buffers) == count + 2
    c = worker.share(np.arange(4, dtype=np.float32), copy=True)
    assert c.backend == BackendKind.POSIX_SHM and list(c.array()) == [0, 1, 2, 3]


def test_shared_memory_reaches_the_chips_of_a_tree_of_workers(torch):
    w4 = Worker(level=4, task_timeout=60)
    try:
        w4.add_worker(Worker(level=3, num_chips=1))
        copy = w4.register(ChipCallable("std.copy"))

        def tile(o, a, _c):
            o.submit_next_level(copy, a, worker=0)

        h = w4.register(tile)
        x = np.arange(N, dtype=np.float32)
        t = torch.zeros(N).share_memory_()
        bx, bt = w4.share(x), w4.share(t)
        assert (bx.backend, bt.backend) == (BackendKind.FORK_COW, BackendKind.FORK_SHM)
        w4.init()
        w4.run(lambda o, _a, _c: o.submit_next_level(h, args((bx.tensor(), IN), (bt.tensor(), OUT)), worker=0))
        assert np.array_equal(t.numpy(), x)  # written by a chip two levels down, in the tensor itself
    finally:
        close_and_check(w4)


def test_an_array_whose_writeable_flag_is_off_is_granted_read_only():
    # It was granted READWRITE, and a sub-worker wrote into the array its owner had made read-only.
    w = Worker(level=3, num_sub_workers=1, task_timeout=60)
    try:
        total = w.register(_total)
        m = mmap.mmap(-1, 4 * N)  # MAP_SHARED: FORK_SHM, which children could write
        x = np.frombuffer(m, np.float32)
        x.setflags(write=False)
        y = np.frombuffer(mmap.mmap(-1, 4 * N), np.float32)
        y.setflags(write=False)
        with pytest.raises(ValueError, match=r"WRITEABLE flag is off.*READ only, not READWRITE"):
            w.share(y, access=AccessMode.READWRITE)
        b = w.share(x)
        assert b.backend == BackendKind.FORK_SHM and b.access == AccessMode.READ
        out = w.alloc_shared_tensor((1,), F32)
        order = w.alloc_shared_tensor((1,), F32)
        addr = w.alloc_shared_tensor((1,), DataType.UINT64)
        w.init()
        with pytest.raises(ValueError, match="READ"):
            args((b.tensor(), OUT), (addr.tensor(), OUT))
        w.run(lambda o, _a, _c: o.submit_sub(total, args((b.tensor(), IN), (order.tensor(), IN), (out.tensor(), OUT))))
        assert out.array()[0] == 0.0
        assert not x.any()
    finally:
        close_and_check(w)
