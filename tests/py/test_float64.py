"""FLOAT64 end to end: a buffer's NumPy view is float64; the standard kernels
compute in double on a chip (std.matmul through dgemm and through its loop,
std.vector_add, std.add_scalar with a double's 64 bits as its scalar,
std.sum_n); a sub-worker reads and writes float64; a float64 NumPy array and a
torch float64 tensor are shared as FLOAT64. Values are chosen so that a
computation narrowed to float anywhere misses the comparison."""

import struct

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, element_size, numpy_dtype
from worker_helpers import args, close_and_check

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT
F64 = DataType.FLOAT64


def f64_scalar(x: float) -> int:
    """A double's IEEE-754 bits as the u64 scalar the FLOAT64 kernels read."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _halve(a):
    """Argument 1 = argument 0 / 2, in the sub-worker (float64 both)."""
    a.array(1)[...] = a.array(0) / 2


@pytest.fixture
def worker():
    w = Worker(level=3, num_chips=1, num_sub_workers=1, task_timeout=60)
    try:
        yield w
    finally:
        close_and_check(w)


def fine(rng, shape):
    """Doubles whose low bits matter: 1 + k * 2**-40 steps, scaled."""
    return rng.standard_normal(shape) * (1 + rng.integers(0, 89, shape) * 2.0**-40)


def test_float64_is_an_eight_byte_numpy_float64():
    assert F64.value == 15 and element_size(F64) == 8
    assert numpy_dtype(F64) == np.dtype(np.float64)


@pytest.mark.parametrize("layout", ["dense", "transposed_b", "every_other_column_of_a"])
def test_std_matmul_computes_in_double(worker, layout):
    mm = worker.register(ChipCallable("std.matmul"))
    M, K, N = 24, 33, 17
    a = worker.alloc_shared_tensor((M, 2 * K), F64)
    b = worker.alloc_shared_tensor((K * N,), F64)
    c = worker.alloc_shared_tensor((M, N), F64)
    worker.init()
    rng = np.random.default_rng(11)
    a.array()[...] = fine(rng, (M, 2 * K))
    b.array()[...] = fine(rng, (K * N,))
    c.array()[...] = -1
    if layout == "every_other_column_of_a":  # not a BLAS operand: the portable loop
        at, a_np = a.tensor((M, K), strides=(2 * K, 2)), a.array()[:, ::2]
    else:
        at, a_np = a.tensor((M, K), strides=(2 * K, 1)), a.array()[:, :K]
    if layout == "transposed_b":
        bt, b_np = b.tensor((K, N), strides=(1, K)), b.array().reshape(N, K).T
    else:
        bt, b_np = b.tensor((K, N)), b.array().reshape(K, N)
    assert at.dtype == F64 and a_np.dtype == np.float64
    worker.run(lambda o, _a, _c: o.submit_next_level(mm, args((at, IN), (bt, IN), (c.tensor(), OUT)), worker=0))
    expect = a_np @ b_np
    np.testing.assert_allclose(c.array(), expect, rtol=1e-13, atol=1e-13)
    narrowed = a_np.astype(np.float32) @ b_np.astype(np.float32)
    assert np.abs(narrowed - expect).max() > 1e-9  # the comparison above would catch a float computation


def test_elementwise_kernels_and_a_sub_worker_keep_every_bit(worker):
    vadd = worker.register(ChipCallable("std.vector_add"))
    adds = worker.register(ChipCallable("std.add_scalar"))
    sum_n = worker.register(ChipCallable("std.sum_n"))
    halve = worker.register(_halve)
    n = 1000
    x, y, z, w, h = (worker.alloc_shared_tensor((n,), F64) for _ in range(5))
    worker.init()
    rng = np.random.default_rng(5)
    x.array()[...] = fine(rng, n)
    y.array()[...] = fine(rng, n)
    s = 1.0 + 2.0**-45  # not a float
    x0, y0 = x.array().copy(), y.array().copy()

    def orch(o, _a, _c):
        o.submit_next_level(vadd, args((x.tensor(), IN), (y.tensor(), IN), (z.tensor(), OUT)), worker=0)
        ta = args((z.tensor(), IN), (w.tensor(), OUT))  # after the add
        ta.add_scalar(f64_scalar(s))
        o.submit_next_level(adds, ta, worker=0)
        o.submit_sub(halve, args((w.tensor(), IN), (h.tensor(), OUT)))
        tb = args((x.tensor(), IN), (h.tensor(), INOUT))
        tb.add_scalar(1)  # h's own value is the first term: h = h + x
        o.submit_next_level(sum_n, tb, worker=0)

    worker.run(orch)
    np.testing.assert_array_equal(z.array(), x0 + y0)
    w_expect = (x0 + y0) + s
    np.testing.assert_array_equal(w.array(), w_expect)
    np.testing.assert_array_equal(h.array(), w_expect / 2 + x0)


def test_a_float64_array_and_a_float64_torch_tensor_are_shared_as_float64(worker, torch):
    adds = worker.register(ChipCallable("std.add_scalar"))
    arr = np.linspace(0, 1, 64, dtype=np.float64)
    ten = torch.zeros(64, dtype=torch.float64).share_memory_()
    src = worker.share(arr)
    dst = worker.share(ten)
    assert (src.dtype, src.nbytes, dst.dtype, dst.nbytes) == (F64, 512, F64, 512)
    worker.init()
    s = 2.0**-40
    ta = args((src.tensor(), IN), (dst.tensor(), OUT))
    ta.add_scalar(f64_scalar(s))
    worker.run(lambda o, _a, _c: o.submit_next_level(adds, ta, worker=0))
    np.testing.assert_array_equal(ten.numpy(), arr + s)
