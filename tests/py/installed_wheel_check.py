"""Run by tests/py/test_wheel.py with the python of a fresh venv that has only the built wheel (and
its dependencies): checks that simpler comes from that venv (argv[2]) and loads the scipy-openblas32
wheel's BLAS, builds the C++ example's chip kernel library (examples/cpp_host/kernels.cpp, argv[1])
with ChipCallable.from_source against the wheel's own headers, runs example.axpb (y = 3 x + 1) on a
Worker's chip and checks every element. Prints "installed wheel: ok" last; any failure is an
exception (exit status 1)."""

import os
import struct
import sys

import numpy as np

import simpler
from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def main(kernel_source: str, venv: str) -> None:
    venv = os.path.realpath(venv)
    assert os.path.realpath(simpler.__file__).startswith(venv + os.sep), simpler.__file__
    include = simpler.get_include()
    assert os.path.realpath(include).startswith(venv + os.sep), include
    assert os.path.isfile(os.path.join(include, "simpler", "chip", "library_abi.h"))
    assert "SIMPLER_CHIP_INCLUDE_DIR" not in os.environ
    # The BLAS the chips load is the scipy-openblas32 wheel's, registered at import (docs/internals/chip.md).
    blas, error = simpler._core.blas_library()
    assert error is None and blas is not None and "/scipy_openblas32/lib/" in blas, (blas, error)

    axpb = ChipCallable.from_source(kernel_source, "example.axpb")
    # The library's key covers its include folder: naming the wheel's headers explicitly gives the same
    # library, so the default was the wheel's own headers.
    os.environ["SIMPLER_CHIP_INCLUDE_DIR"] = include
    assert ChipCallable.from_source(kernel_source, "example.axpb").library == axpb.library
    del os.environ["SIMPLER_CHIP_INCLUDE_DIR"]
    rows, cols = 16, 24
    x_values = (np.arange(rows * cols, dtype=np.float32) % 97 - 40).reshape(rows, cols)
    with Worker(level=3, num_chips=1) as w:
        handle = w.register(axpb)
        x = w.alloc_shared_tensor((rows, cols), DataType.FLOAT32)
        y = w.alloc_shared_tensor((rows, cols), DataType.FLOAT32)
        w.init()
        x.array()[:] = x_values
        y.array()[:] = -1.0

        def orch(o, _args, _cfg):
            ta = TaskArgs()
            ta.add_tensor(x.tensor(), TensorArgType.INPUT)
            ta.add_tensor(y.tensor(), TensorArgType.OUTPUT_EXISTING)
            ta.add_scalar(f32_bits(3.0))
            ta.add_scalar(f32_bits(1.0))
            o.submit_next_level(handle, ta, worker=0)

        w.run(orch)
        got = y.array().copy()
    want = x_values * np.float32(3.0) + np.float32(1.0)
    assert np.array_equal(got, want), (got, want)
    print(f"simpler from {os.path.dirname(simpler.__file__)}; kernels built against {include}")
    print("installed wheel: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
