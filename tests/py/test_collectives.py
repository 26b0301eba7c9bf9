"""simpler.collectives end to end: all_reduce, all_gather, reduce_scatter and
broadcast over a communication domain on 2 chips (all_reduce on 4 too), each of
FLOAT32 / FLOAT64 / FLOAT16 / BFLOAT16 / INT32 against NumPy; leaving the domain while a
collective is in flight; a chip killed mid-collective; the refusals.

Each rank's window buffer is filled from a host buffer by a std.copy task on
that rank's chip and copied back to another host buffer after the collective;
the engine orders all of it by the views' overlaps."""

import os
import signal
import time

import numpy as np
import pytest

import simpler
from simpler import ChipCallable, DataType, TensorArgType, Worker, numpy_dtype, view_array
from worker_helpers import Gate, args, closing, kernel_callable, time_bound  # noqa: F401

F32, F16, BF16, I32 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16, DataType.INT32
F64 = DataType.FLOAT64
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING
MiB = 1 << 20


def make_worker(closing, num_chips=2, **kw):
    kw.setdefault("task_timeout", 60)
    w = Worker(level=3, num_chips=num_chips, **kw)
    closing(w)
    return w


def bf16_bits(f32: np.ndarray) -> np.ndarray:
    """float32 -> BFLOAT16 bit patterns, rounding to nearest even (finite values)."""
    b = f32.astype(np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def widen(a: np.ndarray, dtype: DataType) -> np.ndarray:
    """The values of elements of `dtype` (as numpy_dtype exposes them) as float32 / float64 / int64."""
    if dtype == BF16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    if dtype == F64:
        return a.astype(np.float64)
    return a.astype(np.int64 if dtype == I32 else np.float32)


def narrow(v: np.ndarray, dtype: DataType) -> np.ndarray:
    """float32 / int64 values back to `dtype`'s elements: rounded to nearest even, INT32 wrapping."""
    if dtype == BF16:
        return bf16_bits(v)
    if dtype == I32:
        return v.astype(np.int64).astype(np.uint32).view(np.int32)
    return v.astype(numpy_dtype(dtype))


def rank_data(rng, dtype: DataType, count: int) -> np.ndarray:
    """One rank's elements: random values of `dtype` (INT32 over its whole range, so sums wrap)."""
    if dtype == I32:
        return rng.integers(-(2**31), 2**31, count, dtype=np.int64).astype(np.int32)
    if dtype == F64:  # every bit of the mantissa in use: a sum in float would differ
        return rng.standard_normal(count) * 100
    return narrow(rng.standard_normal(count).astype(np.float32) * 100, dtype)


def reference_sum(data, dtype: DataType) -> np.ndarray:
    """NumPy's sum over the ranks, as std.sum_n computes it: in rank order, FLOAT16 / BFLOAT16
    in float32 and rounded once, INT32 modulo 2^32."""
    acc = widen(data[0], dtype)
    for d in data[1:]:
        acc = acc + widen(d, dtype)
    return narrow(acc, dtype)


class Harness:
    """A Worker with `num_chips` chips, its std.copy callable, and per rank a host input and
    a host output buffer of `nbytes`."""

    def __init__(self, closing, num_chips=2, nbytes=8192, **kw):
        self.w = make_worker(closing, num_chips, **kw)
        self.copy = self.w.register(ChipCallable("std.copy"))
        self.w.init()
        self.nbytes = nbytes
        self.inputs = [self.w.create_buffer(nbytes) for _ in range(num_chips)]
        self.outputs = [self.w.create_buffer(nbytes) for _ in range(num_chips)]

    def fill(self, data):
        for buf, d in zip(self.inputs[: len(data)], data, strict=True):
            buf.shm.buf[: d.nbytes] = d.tobytes()
        for buf in self.outputs:
            buf.shm.buf[: self.nbytes] = b"\xcd" * self.nbytes

    def result(self, rank, dtype, count):
        return view_array(self.outputs[rank].tensor((count,), dtype)).copy()

    def load(self, o, dom, name, dtype, count):
        """std.copy of each rank's host input into its window buffer, on its chip."""
        for r, chip in enumerate(dom.workers):
            o.submit_next_level(
                self.copy,
                args(
                    (self.inputs[r].tensor((count,), dtype), IN), (dom.buffer(name, chip).tensor((count,), dtype), OUT)
                ),
                worker=chip,
            )

    def store(self, o, dom, name, dtype, count):
        """std.copy of each rank's window buffer back into its host output."""
        for r, chip in enumerate(dom.workers):
            o.submit_next_level(
                self.copy,
                args(
                    (dom.buffer(name, chip).tensor((count,), dtype), IN), (self.outputs[r].tensor((count,), dtype), OUT)
                ),
                worker=chip,
            )

    def run(self, collective, data, dtype, count, buffer_bytes=None, workers=None, **kw):
        """Loads `data` (one array per rank), runs `collective` on buffer "x" of a domain over `workers`
        (default: chips 0.. in order), returns each rank's bytes after it."""
        self.fill(data)
        size = buffer_bytes or count * simpler.element_size(dtype)

        def orch(o, _a, _c):
            with o.allocate_domain(
                "d", workers=workers or list(range(len(data))), window_size=size, buffers={"x": size}
            ) as dom:
                self.load(o, dom, "x", dtype, count)
                collective(o, dom, "x", dtype, **kw)
                self.store(o, dom, "x", dtype, count)

        self.w.run(orch)
        return [self.result(r, dtype, count) for r in range(len(data))]


DTYPES = [F32, F64, F16, BF16, I32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("count", [1000, 3, 1])
def test_all_reduce_of_each_dtype_equals_numpys_sum(closing, dtype, count):
    h = Harness(closing)
    rng = np.random.default_rng(count)
    data = [rank_data(rng, dtype, count) for _ in range(2)]
    out = h.run(simpler.all_reduce, data, dtype, count)
    want = reference_sum(data, dtype)
    for r in range(2):
        np.testing.assert_array_equal(out[r], want, err_msg=f"rank {r}")
    if dtype == F32:  # FLOAT32 in rank order is NumPy's own float32 sum, bit for bit
        np.testing.assert_array_equal(out[0], np.sum(np.stack(data), axis=0, dtype=np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_reduce_scatter_leaves_rank_r_the_sum_of_chunk_r(closing, dtype):
    h = Harness(closing)
    count = 999  # chunks of 500 and 499
    rng = np.random.default_rng(7)
    data = [rank_data(rng, dtype, count) for _ in range(2)]
    out = h.run(simpler.reduce_scatter, data, dtype, count)
    want = reference_sum(data, dtype)
    np.testing.assert_array_equal(out[0][:500], want[:500])
    np.testing.assert_array_equal(out[0][500:], data[0][500:])  # the other chunk as it was
    np.testing.assert_array_equal(out[1][500:], want[500:])
    np.testing.assert_array_equal(out[1][:500], data[1][:500])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_all_gather_gives_every_rank_every_ranks_chunk(closing, dtype):
    h = Harness(closing)
    count = 1001
    rng = np.random.default_rng(8)
    data = [rank_data(rng, dtype, count) for _ in range(2)]
    out = h.run(simpler.all_gather, data, dtype, count)
    want = np.concatenate([data[0][:501], data[1][501:]])
    for r in range(2):
        np.testing.assert_array_equal(out[r], want, err_msg=f"rank {r}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("root", [0, 1])
def test_broadcast_copies_the_roots_buffer_everywhere(closing, dtype, root):
    h = Harness(closing)
    count = 700
    rng = np.random.default_rng(9)
    data = [rank_data(rng, dtype, count) for _ in range(2)]
    out = h.run(simpler.broadcast, data, dtype, count, root=root)
    for r in range(2):
        np.testing.assert_array_equal(out[r], data[root], err_msg=f"rank {r}")


def test_a_count_below_the_buffer_leaves_the_rest_alone(closing):
    h = Harness(closing)
    rng = np.random.default_rng(10)
    data = [rank_data(rng, F32, 256) for _ in range(2)]
    out = h.run(simpler.all_reduce, data, F32, 256, buffer_bytes=256 * 4)  # the whole buffer: count=None
    np.testing.assert_array_equal(out[1], data[0] + data[1])
    h.fill(data)

    def orch(o, _a, _c):
        with o.allocate_domain("d", workers=[0, 1], window_size=1024, buffers={"x": 1024}) as dom:
            h.load(o, dom, "x", F32, 256)
            simpler.all_reduce(o, dom, "x", F32, count=100)
            h.store(o, dom, "x", F32, 256)

    h.w.run(orch)
    for r in range(2):
        got = h.result(r, F32, 256)
        np.testing.assert_array_equal(got[:100], (data[0] + data[1])[:100])
        np.testing.assert_array_equal(got[100:], data[r][100:])


def test_ranks_follow_the_domains_worker_order_and_one_rank_is_a_no_op(closing):
    h = Harness(closing)
    count = 10
    rng = np.random.default_rng(13)
    data = [rank_data(rng, I32, count) for _ in range(2)]
    want = reference_sum(data, I32)
    # rank 0 is chip 1: it ends with the sum of chunk 0, rank 1 (chip 0) with chunk 1's
    out = h.run(simpler.reduce_scatter, data, I32, count, workers=[1, 0])
    np.testing.assert_array_equal(out[0][:5], want[:5])
    np.testing.assert_array_equal(out[0][5:], data[0][5:])
    np.testing.assert_array_equal(out[1][5:], want[5:])
    out = h.run(simpler.broadcast, data, I32, count, workers=[1, 0], root=1)
    np.testing.assert_array_equal(out[0], data[1])
    for collective in (simpler.all_reduce, simpler.reduce_scatter, simpler.all_gather, simpler.broadcast):
        (alone,) = h.run(collective, data[1:], I32, count, workers=[1])
        np.testing.assert_array_equal(alone, data[1], err_msg=collective.__name__)


@pytest.mark.parametrize("num_chips", [2, 4])
def test_all_reduce_of_1_mib_float32_equals_numpys_sum(closing, num_chips):
    count = MiB // 4
    h = Harness(closing, num_chips=num_chips, nbytes=MiB)
    rng = np.random.default_rng(num_chips)
    data = [rng.standard_normal(count).astype(np.float32) for _ in range(num_chips)]
    out = h.run(simpler.all_reduce, data, F32, count)
    want = np.sum(np.stack(data), axis=0, dtype=np.float32)
    for r in range(num_chips):
        np.testing.assert_array_equal(out[r], want, err_msg=f"rank {r}")


def test_every_collective_on_4_chips(closing):
    h = Harness(closing, num_chips=4)
    count = 1002  # chunks of 251, 251, 251, 249
    rng = np.random.default_rng(11)
    data = [rank_data(rng, I32, count) for _ in range(4)]
    want = reference_sum(data, I32)
    for r, got in enumerate(h.run(simpler.all_reduce, data, I32, count)):
        np.testing.assert_array_equal(got, want, err_msg=f"all_reduce rank {r}")
    for r, got in enumerate(h.run(simpler.reduce_scatter, data, I32, count)):
        np.testing.assert_array_equal(got[r * 251 : (r + 1) * 251], want[r * 251 : (r + 1) * 251])
    gathered = np.concatenate([data[q][q * 251 : (q + 1) * 251] for q in range(4)])
    for r, got in enumerate(h.run(simpler.all_gather, data, I32, count)):
        np.testing.assert_array_equal(got, gathered, err_msg=f"all_gather rank {r}")
    for r, got in enumerate(h.run(simpler.broadcast, data, I32, count, root=2)):
        np.testing.assert_array_equal(got, data[2], err_msg=f"broadcast rank {r}")
    # fewer elements than ranks: chunks of 1, 1, 0, 0
    small = [d[:2] for d in data]
    for r, got in enumerate(h.run(simpler.all_reduce, small, I32, 2, buffer_bytes=64)):
        np.testing.assert_array_equal(got, reference_sum(small, I32), err_msg=f"rank {r}")


def test_leaving_the_domain_while_a_collective_is_in_flight(closing, tmp_path):
    """The domain's `with` block ends while the collective's tasks wait behind a gate: they
    still complete with the right bytes, and then the windows are freed."""
    count = 4096
    h = Harness(closing, nbytes=count * 4)
    gate_handle = h.w.register(kernel_callable("test.gate"))
    rng = np.random.default_rng(12)
    data = [rng.standard_normal(count).astype(np.float32) for _ in range(2)]
    h.fill(data)
    seen = {}

    def orch(o, _a, _c):
        with o.allocate_domain("d", workers=[0, 1], window_size=count * 4, buffers={"x": count * 4}) as dom:
            h.load(o, dom, "x", F32, count)
            # the gate writes (leaves as they are) rank 0's whole window buffer: every task of the
            # collective reads or writes part of it, so all of them wait for the gate
            gate = Gate(h.w, tmp_path, hold=dom.buffer("x", 0).tensor((count,), F32))
            gate.submit(o, gate_handle, chip=0)
            simpler.all_reduce(o, dom, "x", F32)
            h.store(o, dom, "x", F32, count)
        seen["in_use_after_leaving"] = h.w.device_stats(0)["window_bytes_in_use"]
        gate.open()

    h.w.run(orch)
    assert seen["in_use_after_leaving"] > 0, "the windows were freed while tasks still named them"
    for r in range(2):
        np.testing.assert_array_equal(h.result(r, F32, count), data[0] + data[1], err_msg=f"rank {r}")
    for chip in range(2):
        assert h.w.device_stats(chip)["window_bytes_in_use"] == 0


def test_a_chip_killed_mid_collective_fails_the_run_and_poisons_its_dependents(closing, tmp_path):
    count = 4096
    h = Harness(closing, nbytes=count * 4)
    gate_handle = h.w.register(kernel_callable("test.gate"))
    data = [np.full(count, r + 1, np.float32) for r in range(2)]
    h.fill(data)
    chip0 = h.w.child_pids()[0]

    def orch(o, _a, _c):
        with o.allocate_domain("d", workers=[0, 1], window_size=count * 4, buffers={"x": count * 4}) as dom:
            h.load(o, dom, "x", F32, count)
            gate = Gate(h.w, tmp_path, hold=dom.buffer("x", 0).tensor((count,), F32))
            gate.submit(o, gate_handle, chip=0)
            simpler.all_reduce(o, dom, "x", F32)
            h.store(o, dom, "x", F32, count)
        os.kill(chip0, signal.SIGKILL)  # the gate's task is on chip 0, queued or running: it never finishes

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        h.w.run(orch)
    assert time.monotonic() - t0 < 30, "the run waited for the killed chip"
    msg = str(info.value)
    assert "chip 0" in msg and "dependent task(s) were not run" in msg, msg
    for r in range(2):
        assert h.outputs[r].shm.buf[:4] == b"\xcd" * 4, f"rank {r}'s result was copied back from a poisoned run"
    assert str(h.w.child_status()[1]) == "chip 1: usable", h.w.child_status()
    assert h.w.device_stats(1)["window_bytes_in_use"] == 0


def test_refusals_name_the_collective_and_submit_nothing(closing):
    h = Harness(closing)
    problems = []

    def expect(exc, text, fn, *a, **kw):
        try:
            fn(*a, **kw)
        except exc as e:
            if text not in str(e):
                problems.append(f"{fn.__name__}: {e!r} lacks {text!r}")
            return
        problems.append(f"{fn.__name__}{a[2:]} {kw} was not refused")

    def orch(o, _a, _c):
        with o.allocate_domain("tp", workers=[0, 1], window_size=1024, buffers={"x": 1000}) as dom:
            expect(
                ValueError,
                "all_reduce: dtype INT16 is not supported; the collectives take FLOAT32, FLOAT64, "
                "FLOAT16, BFLOAT16, INT32",
                simpler.all_reduce,
                o,
                dom,
                "x",
                DataType.INT16,
            )
            expect(TypeError, "all_gather.dtype: expected a DataType", simpler.all_gather, o, dom, "x", "float32")
            expect(
                ValueError,
                "reduce_scatter: count 251 FLOAT32 elements (1004 bytes) do not fit buffer 'x' of "
                "domain 'tp' (1000 bytes, 250 elements)",
                simpler.reduce_scatter,
                o,
                dom,
                "x",
                F32,
                count=251,
            )
            expect(ValueError, "all_reduce.count: must be > 0 (got 0)", simpler.all_reduce, o, dom, "x", F32, count=0)
            expect(TypeError, "all_reduce.count: expected an int", simpler.all_reduce, o, dom, "x", F32, count=2.0)
            expect(
                ValueError,
                "broadcast: domain 'tp' has no buffer 'y' (its buffers: 'x')",
                simpler.broadcast,
                o,
                dom,
                "y",
                F32,
            )
            expect(
                ValueError,
                "broadcast: root 2 is not a rank of domain 'tp' (ranks 0 to 1)",
                simpler.broadcast,
                o,
                dom,
                "x",
                F32,
                root=2,
            )
            expect(TypeError, "all_reduce.dom: expected a Domain", simpler.all_reduce, o, object(), "x", F32)
            expect(TypeError, "all_reduce.orch: expected an Orchestrator", simpler.all_reduce, None, dom, "x", F32)
        expect(
            ValueError,
            "all_gather: domain 'tp' was released (its with block ended or release() was called)",
            simpler.all_gather,
            o,
            dom,
            "x",
            F32,
        )
        seen["submitted"] = len(o.submitted)

    seen = {}
    h.w.run(orch)
    assert not problems, problems
    assert seen["submitted"] == 0, "a refused collective submitted tasks"
