"""Worker(spin=...): the spin budget of every waiter is configurable end to
end — None adapts, 0 never spins, a number of seconds spins that long — and a
budget outside [0, 1] s is refused with ValueError before anything starts."""

import math

import numpy as np
import pytest

from simpler import DataType, TaskArgs, TensorArgType, Worker, view_array
from simpler._core import EngineWorker, WorkerConfig


def add_one(a):
    a.array(0)[...] += 1


@pytest.mark.parametrize("spin", [None, 0, 1e-4])
def test_tasks_run_under_every_spin_budget(spin):
    with Worker(level=3, num_sub_workers=1, spin=spin) as w:
        h = w.register(add_one)
        w.init()
        buf = w.create_buffer(64)
        t = buf.tensor((16,), DataType.FLOAT32)
        view_array(t)[...] = 0
        args = TaskArgs()
        args.add_tensor(t, TensorArgType.INOUT)

        def orch(o, _a, _c):
            for _ in range(5):
                o.submit_sub(h, args)

        w.run(orch)
        np.testing.assert_array_equal(view_array(t), np.full(16, 5, dtype=np.float32))


@pytest.mark.parametrize("spin", [-1e-6, 1.5])
def test_a_spin_budget_outside_zero_to_one_second_is_refused(spin):
    with pytest.raises(ValueError, match="spin"):
        Worker(level=3, num_sub_workers=1, spin=spin)


@pytest.mark.parametrize("spin", [math.nan, math.inf, -1.0])
def test_the_engine_binding_refuses_a_bad_spin_budget(spin):
    with pytest.raises(ValueError, match="spin"):
        config = WorkerConfig()
        config.spin = spin
        EngineWorker(config)
