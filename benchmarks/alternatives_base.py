"""What bench_alternatives.py's systems share: the System each one is, the 64 MiB workload's source
and check, and Skipped (a system that cannot run here)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

MIB = 1 << 20


def source_array(nbytes: int) -> np.ndarray:
    return (np.arange(nbytes // 4, dtype=np.uint32) % 65536).astype(np.float32)


def check_big(result: Any, src: np.ndarray) -> None:
    got = np.asarray(result)
    if got.shape != src.shape or not np.array_equal(got, src + np.float32(1.0)):
        raise AssertionError("64 MiB result differs from src + 1")


class Skipped(Exception):
    pass


class System:
    """One system under test: open() before the workloads, close() after. Each workload returns
    one round's figure; sizes come from the driver."""

    name = ""

    def open(self) -> None: ...

    def close(self) -> None: ...

    def round_trip_us(self, k: int) -> float:
        """Median µs of k one-task submit-and-wait calls."""
        times = []
        for _ in range(k):
            t0 = time.perf_counter()
            self.one()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e6

    def one(self) -> None:
        raise NotImplementedError

    def independent_s(self, n: int) -> float:
        raise NotImplementedError

    def chain_s(self, n: int) -> float:
        raise NotImplementedError

    def big_s(self, src: np.ndarray) -> float:
        raise NotImplementedError
