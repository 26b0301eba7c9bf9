"""Device memory with scopes: a two-layer forward pass kept on the chips.

Each chip gets its own copy of the weights (device memory that lives for the
run), then processes its half of the batch inside an `orch.scope()`: the
activations are device memory allocated in the scope, freed once the tasks
that name them have finished. Only the input rows go in and the output rows
come back (`copy_to` / `copy_from`, ordinary tasks ordered by their tags).
Afterwards the chips' device memory is back to zero, and naming a block whose
scope ended, or a block of another chip, is refused with a clear error.

    python examples/device_memory.py [--batch 64] [--features 32] [--hidden 48] [--out 16]
"""

import argparse

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

F32 = DataType.FLOAT32
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def matmul_args(a, b, c):
    ta = TaskArgs()
    for t, tag in ((a, IN), (b, IN), (c, OUT)):
        ta.add_tensor(t, tag)
    return ta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--hidden", type=int, default=48)
    p.add_argument("--out", type=int, default=16)
    o_ = p.parse_args(argv)
    m, k, h, n = o_.batch, o_.features, o_.hidden, o_.out
    if m % 2:
        p.error("--batch must be even (two chips take half each)")
    rng = np.random.default_rng(5)
    X = rng.standard_normal((m, k)).astype(np.float32)
    W1 = rng.standard_normal((k, h)).astype(np.float32)
    W2 = rng.standard_normal((h, n)).astype(np.float32)

    with Worker(level=3, num_chips=2) as w:
        mm = w.register(ChipCallable("std.matmul"))
        w.init()
        x, w1, w2, y = (w.create_buffer(a * b * 4) for a, b in ((m, k), (k, h), (h, n), (m, n)))
        x.array((m, k), F32)[...] = X
        w1.array((k, h), F32)[...] = W1
        w2.array((h, n), F32)[...] = W2
        rows = m // 2
        leftover = {}

        def forward(o, _args, _cfg):
            for chip in (0, 1):
                d_w1 = o.alloc_child_tensor(chip, (k, h), F32)  # the run's: freed when the run ends
                d_w2 = o.alloc_child_tensor(chip, (h, n), F32)
                o.copy_to(d_w1.tensor(), w1.tensor((k, h), F32))
                o.copy_to(d_w2.tensor(), w2.tensor((h, n), F32))
                with o.scope():  # the activations live in here
                    d_x = o.alloc_child_tensor(chip, (rows, k), F32)
                    d_h = o.alloc_child_tensor(chip, (rows, h), F32)
                    d_y = o.alloc_child_tensor(chip, (rows, n), F32)
                    o.copy_to(d_x.tensor(), x.tensor((rows, k), F32, None, chip * rows * k * 4))
                    o.submit_next_level(mm, matmul_args(d_x.tensor(), d_w1.tensor(), d_h.tensor()), worker=chip)
                    o.submit_next_level(mm, matmul_args(d_h.tensor(), d_w2.tensor(), d_y.tensor()), worker=chip)
                    o.copy_from(y.tensor((rows, n), F32, None, chip * rows * n * 4), d_y.tensor())
                leftover[chip] = (d_h, d_w1)
            # after its scope, d_h is refused at once (its bytes are freed when its readers finish)
            try:
                o.submit_next_level(
                    mm, matmul_args(leftover[0][0].tensor(), leftover[0][1].tensor(), leftover[0][0].tensor()), worker=0
                )
            except ValueError as e:
                print(f"refused, as it should be: {e}")
            # chip 1's weights named on chip 0
            try:
                o.submit_next_level(
                    mm, matmul_args(leftover[1][1].tensor(), leftover[1][1].tensor(), leftover[1][1].tensor()), worker=0
                )
            except ValueError as e:
                print(f"refused, as it should be: {e}")

        w.run(forward)
        Y = y.array((m, n), F32).copy()
        stats = [w.device_stats(chip) for chip in (0, 1)]

    ok = bool(np.allclose(Y, (X @ W1) @ W2, rtol=1e-4, atol=1e-3))
    print(f"y = (x @ W1) @ W2 for {m} rows on 2 chips, activations in scoped device memory: matches NumPy: {ok}")
    for chip, s in enumerate(stats):
        print(
            f"chip {chip} device memory after the run: {s['bytes_in_use']} bytes in use, "
            f"{s['live_allocations']} live allocations"
        )
    freed = all(s["bytes_in_use"] == 0 and s["live_allocations"] == 0 for s in stats)
    return 0 if ok and freed else 1


if __name__ == "__main__":
    raise SystemExit(main())
