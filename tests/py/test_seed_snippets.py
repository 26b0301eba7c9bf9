"""The seed document's snippets that the runtime supports today, run as written
except for set-up lines: "Naming a view" and "Reading and writing data — torch
only at the boundaries" (with the compute in a Python sub-worker), plus the
frombuffer/close() rule."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from simpler import DataType, TaskArgs, TensorArgType, Worker, view_array  # noqa: E402


def add_five(args):
    """out = a + 5, computed with torch.frombuffer on exactly the views' bytes."""
    src = torch.from_numpy(args.array(0))
    out = torch.from_numpy(args.array(1))
    out.copy_(src + 5.0)


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
