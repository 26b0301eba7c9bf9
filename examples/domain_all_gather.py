"""A tensor-parallel matmul with a communication domain: Y = X @ W, W split by
columns across two chips, the halves all-gathered through the chips' windows.

`orch.allocate_domain` carves a symmetric window on each chip holding two
buffers: `half` (this chip's X @ W_r) and `full` (every rank's half, stacked by
rank). Each chip computes its half into its own window, copies it into its own
`full`, and reads its peer's half straight out of the peer's window (a peer
read: a task on chip r naming chip 1-r's window buffer). The usual dependency
inference orders each read after the peer's matmul. Both chips end up holding
all of Y; leaving the `with` block frees the windows once those tasks are done,
and a host sub-worker naming a window buffer is refused at submit.

    python examples/domain_all_gather.py [--batch 64] [--features 32] [--out 16]
"""

import argparse
import time

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

F32 = DataType.FLOAT32
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def task_args(*pairs):
    ta = TaskArgs()
    for t, tag in pairs:
        ta.add_tensor(t, tag)
    return ta


def assembled(buf, m: int, h: int) -> np.ndarray:
    """Y from a chip's gathered halves (stacked by rank), copied out of the buffer."""
    stacked = buf.array((2, m, h), F32)
    return np.concatenate([stacked[0], stacked[1]], axis=1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--out", type=int, default=16)
    o_ = p.parse_args(argv)
    m, k, n = o_.batch, o_.features, o_.out
    if n % 2:
        p.error("--out must be even (two chips take half the columns each)")
    h = n // 2
    rng = np.random.default_rng(7)
    X = rng.standard_normal((m, k)).astype(np.float32)
    W = rng.standard_normal((k, n)).astype(np.float32)

    with Worker(level=3, num_chips=2, num_sub_workers=1) as w:
        mm = w.register(ChipCallable("std.matmul"))
        copy = w.register(ChipCallable("std.copy"))
        peek = w.register(lambda args: None)
        w.init()
        x = w.create_buffer(m * k * 4)
        x.array((m, k), F32)[...] = X
        ws = [w.create_buffer(k * h * 4) for _ in range(2)]
        for r in range(2):
            ws[r].array((k, h), F32)[...] = W[:, r * h : (r + 1) * h]
        gathered = [w.create_buffer(2 * m * h * 4) for _ in range(2)]
        refusal = {}

        def orch(o, _a, _c):
            with o.allocate_domain(
                "tp",
                workers=[0, 1],
                window_size=4 * m * h * 4 + 4096,
                buffers={"half": m * h * 4, "full": 2 * m * h * 4},
            ) as dom:
                half = {c: dom.buffer("half", c).tensor((m, h), F32) for c in dom.workers}
                full = {c: dom.buffer("full", c) for c in dom.workers}
                for c in dom.workers:
                    r = dom.rank(c)
                    o.submit_next_level(
                        mm,
                        task_args((x.tensor((m, k), F32), IN), (ws[r].tensor((k, h), F32), IN), (half[c], OUT)),
                        worker=c,
                    )
                for c in dom.workers:
                    for peer in dom.workers:  # own half, then the peer's straight from its window
                        slot = full[c].tensor((m, h), F32, byte_offset=dom.rank(peer) * m * h * 4)
                        o.submit_next_level(copy, task_args((half[peer], IN), (slot, OUT)), worker=c)
                    o.copy_from(gathered[c].tensor((2 * m * h,), F32), full[c].tensor((2 * m * h,), F32))
                try:
                    o.submit_sub(peek, task_args((half[0], IN)))
                except ValueError as e:
                    refusal["sub"] = str(e)

        w.run(orch)
        expected = X @ W
        ok = True
        for c in range(2):
            good = np.allclose(assembled(gathered[c], m, h), expected, rtol=1e-4, atol=1e-4)
            print(f"chip {c} holds all of Y = X @ W ({m}x{n}): {'ok' if good else 'WRONG'}")
            ok = ok and good
        print(f"a sub-worker naming a window buffer: refused ({refusal.get('sub', 'NOT REFUSED')})")
        ok = ok and "domain 'tp'" in refusal.get("sub", "")
        deadline = time.monotonic() + 30
        while any(w.device_stats(c)["window_bytes_in_use"] for c in range(2)) and time.monotonic() < deadline:
            time.sleep(0.01)
        in_use = [w.device_stats(c)["window_bytes_in_use"] for c in range(2)]
        print(f"window bytes in use after the domain: {in_use}")
        ok = ok and in_use == [0, 0]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
