"""A training loop shaped like the real thing, on your own torch tensors.

A linear model y = x @ W learns a fixed target map by gradient descent. The
tensors are ordinary torch tensors the program already has — made shared with
`share_memory_()` before the Worker starts — and `w.share(t)` names their own
bytes as buffers: nothing is copied in or out, and the model ends up trained in
the original `W` tensor.

Each step is a small graph, ordered by what each task reads and writes:

  1. data, on the sub-workers: each fills its half of the batch x (synthetic
     inputs) and the matching half of the targets t;
  2. forward, on the chips: y = x @ W, one half of the rows per chip (std.matmul);
  3. loss gradient, on a sub-worker: dy = (y - t) / batch, and the loss;
  4. weight gradient, on a chip: g = xᵀ @ dy (std.matmul on a transposed view of x);
  5. update, on a sub-worker: W -= lr · g.

Step k+1's data tasks overwrite x while step k's gradient still reads it: the
runtime orders them (write after read) without being told, while the two
halves of one step's data and forward tasks share no byte and get no edge.

    python examples/training_step.py [--steps 20] [--batch 64] [--features 16] [--out 4]
"""

import argparse
import sys

import numpy as np

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker

F32 = DataType.FLOAT32
IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING, TensorArgType.INOUT


def make_batch(args):
    """Fills rows [r0, r0 + rows) of x and t for step `step` (the same numbers the check computes)."""
    x, t = args.array(0), args.array(1)
    step, r0, true_w_seed = args.scalars
    x[...], t[...] = batch_rows(step, r0, x.shape[0], x.shape[1], t.shape[1], true_w_seed)


def batch_rows(step, r0, rows, features, out, true_w_seed):
    rng = np.random.default_rng(1000 * step + r0)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    true_w = np.random.default_rng(true_w_seed).standard_normal((features, out)).astype(np.float32)
    return x, x @ true_w


def loss_grad(args):
    y, t, dy, loss = args.array(0), args.array(1), args.array(2), args.array(3)
    diff = y - t
    dy[...] = diff / y.shape[0]
    loss[0] = 0.5 * float((diff * diff).sum()) / y.shape[0]


def update(args):
    w, g, lr = args.array(0), args.array(1), args.array(2)
    w -= lr[0] * g


def task(*pairs, scalars=()):
    ta = TaskArgs()
    for t, tag in pairs:
        ta.add_tensor(t, tag)
    for s in scalars:
        ta.add_scalar(s)
    return ta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--out", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.1)
    o_ = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("this example needs torch (pip install torch)", file=sys.stderr)
        return 2
    b, f, n, seed = o_.batch, o_.features, o_.out, 42
    if b % 2:
        p.error("--batch must be even (two halves)")
    half = b // 2

    # The program's own tensors, shared before the Worker starts its children.
    W = torch.zeros(f, n).share_memory_()
    x, t = torch.zeros(b, f).share_memory_(), torch.zeros(b, n).share_memory_()
    y, dy, g = torch.zeros(b, n).share_memory_(), torch.zeros(b, n).share_memory_(), torch.zeros(f, n).share_memory_()
    loss, lr = torch.zeros(o_.steps).share_memory_(), torch.full((1,), o_.lr).share_memory_()
    w_ptr = W.data_ptr()

    with Worker(level=3, num_chips=2, num_sub_workers=2) as w:
        mm = w.register(ChipCallable("std.matmul"))
        data, grad, upd = w.register(make_batch), w.register(loss_grad), w.register(update)
        sW, sx, st, sy, sdy, sg, sloss, slr = (w.share(v) for v in (W, x, t, y, dy, g, loss, lr))
        w.init()

        def rows(s, r0, cols):
            return s.tensor((half, cols), F32, None, r0 * cols * 4)

        def train(o, _a, _c):
            for step in range(o_.steps):
                for k in (0, 1):
                    o.submit_sub(
                        data,
                        task(
                            (rows(sx, k * half, f), OUT), (rows(st, k * half, n), OUT), scalars=(step, k * half, seed)
                        ),
                    )
                for chip in (0, 1):
                    o.submit_next_level(
                        mm,
                        task((rows(sx, chip * half, f), IN), (sW.tensor(), IN), (rows(sy, chip * half, n), OUT)),
                        worker=chip,
                    )
                o.submit_sub(
                    grad,
                    task(
                        (sy.tensor(), IN),
                        (st.tensor(), IN),
                        (sdy.tensor(), OUT),
                        (sloss.tensor((1,), F32, None, step * 4), OUT),
                    ),
                )
                x_t = sx.tensor((f, b), F32, (1, f))  # xᵀ: a transposed view, no copy
                o.submit_next_level(mm, task((x_t, IN), (sdy.tensor(), IN), (sg.tensor(), OUT)), worker=step % 2)
                o.submit_sub(upd, task((sW.tensor(), INOUT), (sg.tensor(), IN), (slr.tensor(), IN)))

        w.run(train)

    # The same loop in torch, in this process, from the same data.
    W_ref = torch.zeros(f, n)
    for step in range(o_.steps):
        xb = torch.cat([torch.from_numpy(batch_rows(step, k * half, half, f, n, seed)[0]) for k in (0, 1)])
        tb = torch.cat([torch.from_numpy(batch_rows(step, k * half, half, f, n, seed)[1]) for k in (0, 1)])
        W_ref -= o_.lr * (xb.T @ ((xb @ W_ref - tb) / b))
    same = torch.allclose(W, W_ref, rtol=1e-4, atol=1e-5)
    print(
        f"{o_.steps} steps: loss {loss[0].item():.4f} -> {loss[-1].item():.4f}; "
        f"W trained in place (data_ptr unchanged: {W.data_ptr() == w_ptr}); matches torch: {same}"
    )
    return 0 if same and W.data_ptr() == w_ptr else 1


if __name__ == "__main__":
    raise SystemExit(main())
