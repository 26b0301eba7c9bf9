"""The snippets of docs/explanation/memory-model.md, run as written except for set-up lines:
"Backings and buffers", "Views", "Tags and grants" (on a simulated chip running
std.copy, staged and zero-copy) and "Data in and out" (with the compute in a
Python sub-worker), plus the frombuffer/close() rule. Each one's results are
checked."""

import numpy as np
import pytest

from torch_helpers import require_torch

torch = require_torch(module_level=True)

from simpler import (  # noqa: E402
    BackendKind,
    CallConfig,
    ChipCallable,
    DataType,
    DeviceBuffer,
    TaskArgs,
    TensorArgType,
    Worker,
    view_array,
)


def add_five(args):
    """out = a + 5, computed with torch.frombuffer on exactly the views' bytes."""
    src = torch.from_numpy(args.array(0))
    out = torch.from_numpy(args.array(1))
    out.copy_(src + 5.0)


def test_allocating_buffers():
    M, N = 8, 16
    dtype = DataType.FLOAT32
    nbytes = M * N * 4
    with Worker(level=3, num_chips=1) as worker:
        fork_shared = worker.alloc_shared_tensor((M, N), dtype)  # before init(): a FORK_SHM region
        worker.init()
        # -- the snippet --
        h = worker.create_buffer(nbytes)  # kind3: explicit shared host buffer (POSIX shm)
        assert h.backend == BackendKind.POSIX_SHM and h.nbytes == nbytes
        h = worker.alloc_shared_tensor((M, N), dtype)  # kind3: shape-sized create_buffer
        assert h.shape == (M, N) and h.nbytes == nbytes
        assert fork_shared.backend == BackendKind.FORK_SHM
        h.array()[...] = np.arange(M * N, dtype=np.float32).reshape(M, N)
        out = fork_shared  # the chip inherited it at fork: nothing to map
        out.array()[...] = 0
        seen = []

        def my_orch(orch, args, cfg):
            worker = 0  # set-up: the chip the device memory lives on
            # inside an orch fn, for device (chip-private) memory:
            d = orch.alloc_child_tensor(worker, (M, N), dtype)  # kind4: DEVICE_MALLOC on that chip
            seen.append(d)
            orch.copy_to(d.tensor(), h.tensor())  # .base is the copy_to destination
            orch.copy_from(out.tensor(), d.tensor())

        worker.run(my_orch)
        (d,) = seen
        assert isinstance(d, DeviceBuffer) and d.chip == 0 and d.base != 0 and d.nbytes == nbytes
        assert d.descriptor.backend_kind == BackendKind.DEVICE_MALLOC and d.descriptor.address == d.base
        assert d.released  # the run's scope ended
        np.testing.assert_array_equal(out.array(), h.array())


@pytest.mark.parametrize("zero_copy", [False, True], ids=["staged", "zero_copy"])
def test_submitting_a_task(zero_copy):
    run_cfg = CallConfig(zero_copy=True) if zero_copy else None
    SIZE = 1000
    with Worker(level=3, num_chips=1) as worker:
        chip_handle = worker.register(ChipCallable("std.copy"))  # (src INPUT, dst OUTPUT_EXISTING)
        worker.init()
        a_h = worker.create_buffer(SIZE * 4)
        out_h = worker.create_buffer(SIZE * 4)
        view_array(a_h.tensor((SIZE,), DataType.FLOAT32))[...] = np.arange(SIZE, dtype=np.float32)
        view_array(out_h.tensor((SIZE,), DataType.FLOAT32))[...] = -1

        def my_orch(orch, args, cfg):
            # -- the snippet --
            ta = TaskArgs()
            ta.add_tensor(a_h.tensor((SIZE,), DataType.FLOAT32), TensorArgType.INPUT)
            ta.add_tensor(out_h.tensor((SIZE,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)
            orch.submit_next_level(chip_handle, ta, cfg, worker=0)

        worker.run(my_orch, None, run_cfg)
        np.testing.assert_array_equal(
            view_array(out_h.tensor((SIZE,), DataType.FLOAT32)), np.arange(SIZE, dtype=np.float32)
        )


def test_naming_a_view():
    with Worker(level=3, num_sub_workers=1) as w:
        M, N, K = 8, 16, 4
        h = w.create_buffer(M * N * 4)
        v = h.tensor(shapes=(M, N), dtype=DataType.FLOAT32)  # contiguous (row-major strides)
        assert v.strides == (N, 1)
        v = h.tensor(shapes=(N, M), dtype=DataType.FLOAT32, strides=(1, M))  # transposed
        assert v.strides == (1, M)
        off = 4 * N * 4
        v = h.tensor(shapes=(M // 2, K), dtype=DataType.FLOAT32, byte_offset=off)  # sub-region
        assert v.byte_offset == off
        with pytest.raises(ValueError, match="multiple of the element size"):
            h.tensor(shapes=(4,), dtype=DataType.FLOAT32, byte_offset=2)
        with pytest.raises(ValueError, match="strides"):
            h.tensor(shapes=(4,), dtype=DataType.FLOAT32, strides=(0,))


def test_torch_only_at_the_boundaries():
    n = 1024
    with Worker(level=3, num_sub_workers=2) as worker:
        post = worker.register(add_five)
        worker.init()
        h = worker.create_buffer(n * 4)
        out_h = worker.create_buffer(n * 4)
        torch.frombuffer(h.shm.buf, dtype=torch.float32, count=n).fill_(5.0)  # before run()

        def my_orch(orch, args, cfg):  # the orch fn names tensors only
            ta = TaskArgs()
            ta.add_tensor(h.tensor((n,), DataType.FLOAT32), TensorArgType.INPUT)
            ta.add_tensor(out_h.tensor((n,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)
            orch.submit_sub(post, ta)

        worker.run(my_orch)
        result = torch.frombuffer(out_h.shm.buf, dtype=torch.float32, count=n)  # after run()
        assert torch.equal(result, torch.full((n,), 10.0))
        # A frombuffer tensor keeps the memoryview alive: close() refuses until it is dropped.
        with pytest.raises(BufferError):
            out_h.close()
        del result
        out_h.close()
        np.testing.assert_array_equal(view_array(h.tensor((n,), DataType.FLOAT32)), np.full(n, 5.0, np.float32))
