"""bench_alternatives.py's simpler systems: a Worker with 2 sub-workers (Python callables), and one
with 2 simulated chips (std.noop, std.add_scalar; the 64 MiB task staged or zero-copy)."""

from __future__ import annotations

import struct
import time
from typing import Any

import numpy as np

from alternatives_base import System, check_big


# -- sub-worker callables (registered before init: every sub-worker has them) -----------------
def noop(*_a: Any) -> None:
    return None


def sub_inc(args: Any) -> None:  # simpler sub-worker: the chain's INOUT counter
    args.array(0)[0] += 1


def sub_add_one(args: Any) -> None:  # simpler sub-worker: 64 MiB in place
    a = args.array(0)
    a += np.float32(1.0)


# -- simpler -----------------------------------------------------------------------------------
class SimplerSub(System):
    name = "simpler, 2 sub-workers"

    def __init__(self, big_nbytes: int):
        self.big_nbytes = big_nbytes

    def open(self) -> None:
        from simpler import DataType, TaskArgs, TensorArgType, Worker

        self.TaskArgs, self.T = TaskArgs, TensorArgType
        self.w = Worker(level=3, num_sub_workers=2)
        self.h_noop = self.w.register(noop)
        self.h_inc = self.w.register(sub_inc)
        self.h_add = self.w.register(sub_add_one)
        self.cnt = self.w.alloc_shared_tensor((1,), DataType.INT64)
        self.big = self.w.alloc_shared_tensor((self.big_nbytes // 4,), DataType.FLOAT32)
        self.w.init()
        self.empty = TaskArgs()

    def close(self) -> None:
        self.w.close()

    def one(self) -> None:
        self.w.run(lambda o, _a, _c: o.submit_sub(self.h_noop, self.empty))

    def independent_s(self, n: int) -> float:
        h, empty = self.h_noop, self.empty

        def orch(o: Any, _a: Any, _c: Any) -> None:
            for _ in range(n):
                o.submit_sub(h, empty)

        t0 = time.perf_counter()
        self.w.run(orch)
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        ta = self.TaskArgs()
        ta.add_tensor(self.cnt.tensor(), self.T.INOUT)
        h = self.h_inc

        def orch(o: Any, _a: Any, _c: Any) -> None:
            for _ in range(n):
                o.submit_sub(h, ta)

        self.cnt.array()[0] = 0
        t0 = time.perf_counter()
        self.w.run(orch)
        dt = time.perf_counter() - t0
        if int(self.cnt.array()[0]) != n:
            raise AssertionError(f"chain ended at {self.cnt.array()[0]}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        ta = self.TaskArgs()
        ta.add_tensor(self.big.tensor(), self.T.INOUT)
        t0 = time.perf_counter()
        self.big.array()[:] = src
        self.w.run(lambda o, _a, _c: o.submit_sub(self.h_add, ta))
        result = self.big.array()
        dt = time.perf_counter() - t0
        check_big(result, src)
        return dt


def f32_bits(v: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", v))[0])


class SimplerChip(System):
    name = "simpler, 2 chips"

    def __init__(self, big_nbytes: int, zero_copy: bool = False):
        self.big_nbytes = big_nbytes
        self.zero_copy = zero_copy

    def open(self) -> None:
        from simpler import CallConfig, ChipCallable, DataType, TaskArgs, TensorArgType, Worker

        self.TaskArgs, self.T, self.CallConfig = TaskArgs, TensorArgType, CallConfig
        self.w = Worker(level=3, num_chips=2)
        self.h_noop = self.w.register(ChipCallable("std.noop"))
        self.h_add = self.w.register(ChipCallable("std.add_scalar"))
        self.xy = self.w.alloc_shared_tensor((2,), DataType.FLOAT32)
        self.big_in = self.w.alloc_shared_tensor((self.big_nbytes // 4,), DataType.FLOAT32)
        self.big_out = self.w.alloc_shared_tensor((self.big_nbytes // 4,), DataType.FLOAT32)
        self.w.init()
        self.empty = TaskArgs()

    def close(self) -> None:
        self.w.close()

    def one(self) -> None:
        self.w.run(lambda o, _a, _c: o.submit_next_level(self.h_noop, self.empty, None, worker=0))

    def independent_s(self, n: int) -> float:
        h, empty = self.h_noop, self.empty

        def orch(o: Any, _a: Any, _c: Any) -> None:
            for i in range(n):
                o.submit_next_level(h, empty, None, worker=i & 1)

        t0 = time.perf_counter()
        self.w.run(orch)
        return time.perf_counter() - t0

    def chain_s(self, n: int) -> float:
        from simpler import DataType

        x = self.xy.tensor((1,), DataType.FLOAT32)
        y = self.xy.tensor((1,), DataType.FLOAT32, byte_offset=4)
        one = f32_bits(1.0)
        pair = []
        for src, dst in ((x, y), (y, x)):  # y = x + 1, then x = y + 1, ...: each reads the one before
            ta = self.TaskArgs()
            ta.add_tensor(src, self.T.INPUT)
            ta.add_tensor(dst, self.T.OUTPUT_EXISTING)
            ta.add_scalar(one)
            pair.append(ta)
        h = self.h_add

        def orch(o: Any, _a: Any, _c: Any) -> None:
            for i in range(n):
                o.submit_next_level(h, pair[i & 1], None, worker=0)

        self.xy.array()[:] = 0
        t0 = time.perf_counter()
        self.w.run(orch)
        dt = time.perf_counter() - t0
        last = float(self.xy.array()[1 if n & 1 else 0])
        if last != float(n):
            raise AssertionError(f"chain ended at {last}, not {n}")
        return dt

    def big_s(self, src: np.ndarray) -> float:
        ta = self.TaskArgs()
        ta.add_tensor(self.big_in.tensor(), self.T.INPUT)
        ta.add_tensor(self.big_out.tensor(), self.T.OUTPUT_EXISTING)
        ta.add_scalar(f32_bits(1.0))
        cfg = self.CallConfig(zero_copy=self.zero_copy)
        self.big_out.array()[:] = 0
        t0 = time.perf_counter()
        self.big_in.array()[:] = src
        self.w.run(lambda o, _a, _c: o.submit_next_level(self.h_add, ta, cfg, worker=0))
        result = self.big_out.array()
        dt = time.perf_counter() - t0
        check_big(result, src)
        return dt
