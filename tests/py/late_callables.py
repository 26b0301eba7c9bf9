"""Sub-worker callables that tests/py/test_register_late.py registers on a
running Worker by import path ("late_callables:stamp")."""

import os


def stamp(args):
    """Writes this process's pid and scalar 0 into the INT64 view args[0] (2 elements)."""
    out = args.array(0)
    out[0] = os.getpid()
    out[1] = args.scalars[0]
