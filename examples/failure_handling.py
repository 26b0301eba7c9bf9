"""Failure handling: every mistake is a clear error that loses nothing.

Runs six mistakes against one Worker and prints what each one says; after each
the Worker keeps running (the last step proves it):

1. a sub-worker callable raises — the run raises RuntimeError naming the task,
   the callable, the sub-worker and the cause; the task that needed its output
   is not run (poisoned), and one that did not need it still runs;
2. a write through a read-only grant — refused when the argument is added;
3. one task naming overlapping views for writing — refused at submit;
4. a stale handle (a buffer released, then named) — refused at submit;
5. a child killed in the middle of a task — that task fails naming the signal,
   the Worker loses that child and the others go on;
6. a task that never returns — killed at `task_timeout`, reported as TIMED_OUT.

    python examples/failure_handling.py [--timeout 1.0]
"""

import argparse
import os
import signal
import time

import numpy as np

from simpler import AccessMode, DataType, TaskArgs, TensorArgType, Worker

F32 = DataType.FLOAT32
IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def broken(args):
    raise ValueError("this input cannot be processed")


def double(args):
    args.array(1)[:] = 2 * args.array(0)


def die(args):
    os.kill(os.getpid(), signal.SIGKILL)


def hang(args):
    time.sleep(3600)


def task(*pairs):
    ta = TaskArgs()
    for t, tag in pairs:
        ta.add_tensor(t, tag)
    return ta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=1.0, help="task_timeout in seconds (for mistake 6)")
    opts = p.parse_args(argv)
    seen = []

    def expect(title, error_type, fn):
        try:
            fn()
        except error_type as e:
            print(f"{len(seen) + 1}. {title}\n   {type(e).__name__}: {e}\n")
            seen.append(title)
        else:
            raise AssertionError(f"{title}: no error")

    with Worker(level=3, num_sub_workers=3, task_timeout=opts.timeout) as w:
        fns = {f.__name__: w.register(f) for f in (broken, double, die, hang)}
        w.init()
        a, b, c, d = (w.create_buffer(64) for _ in range(4))
        a.array((16,), F32)[:] = 1

        def fails(o, _a, _c):
            o.submit_sub(fns["broken"], task((a.tensor((16,), F32), IN), (b.tensor((16,), F32), OUT)))
            o.submit_sub(fns["double"], task((b.tensor((16,), F32), IN), (c.tensor((16,), F32), OUT)))  # poisoned
            o.submit_sub(fns["double"], task((a.tensor((16,), F32), IN), (d.tensor((16,), F32), OUT)))  # runs

        expect("a callable raised", RuntimeError, lambda: w.run(fails))
        assert np.all(d.array((16,), F32) == 2), "the independent task ran"

        ro = w.create_buffer(64, AccessMode.READ)
        expect("a write through a read-only grant", ValueError, lambda: task((ro.tensor((16,), F32), OUT)))

        def overlapping(o, _a, _c):
            o.submit_sub(fns["double"], task((a.tensor((8,), F32), OUT), (a.tensor((8,), F32, None, 16), OUT)))

        expect("overlapping writes in one task", ValueError, lambda: w.run(overlapping))

        stale = w.create_buffer(64)
        view = stale.tensor((16,), F32)
        w.release_buffer(stale, wait=True)
        names_stale = task((view, IN), (c.tensor((16,), F32), OUT))
        expect("a stale handle", ValueError, lambda: w.run(lambda o, _a, _c: o.submit_sub(fns["double"], names_stale)))

        expect(
            "a child killed mid-task",
            RuntimeError,
            lambda: w.run(lambda o, _a, _c: o.submit_sub(fns["die"], task((c.tensor((16,), F32), OUT)))),
        )
        expect(
            "a task that never returns",
            RuntimeError,
            lambda: w.run(lambda o, _a, _c: o.submit_sub(fns["hang"], task((c.tensor((16,), F32), OUT)))),
        )

        print("children now:", "; ".join(str(s) for s in w.child_status()))
        w.run(
            lambda o, _a, _c: o.submit_sub(fns["double"], task((a.tensor((16,), F32), IN), (c.tensor((16,), F32), OUT)))
        )
        usable = bool(np.all(c.array((16,), F32) == 2))
        print(f"the Worker still runs tasks on the children it has left: {usable}")
    return 0 if usable and len(seen) == 6 else 1


if __name__ == "__main__":
    raise SystemExit(main())
