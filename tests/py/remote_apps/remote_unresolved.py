"""A callable that does not resolve on one rank fails rank 0's init() naming
that rank and the import path; nothing is left running.

Run: python -m simpler launch -n 2 --isolate remote_unresolved.py
"""

import os
import shutil
import sys
import tempfile

import remote_kernels as rk

from simpler import TaskKind, Worker

# Only rank 0 can import the module 'rank0_only' (its directory is on rank 0's path alone).
if os.environ.get("OMPI_COMM_WORLD_RANK") == "0":
    here = tempfile.mkdtemp(prefix="simpler-rank0-")
    with open(os.path.join(here, "rank0_only.py"), "w") as f:
        f.write("def fn(args):\n    pass\n")
    sys.path.insert(0, here)
    import rank0_only  # noqa: F401 - resolved now: the directory goes before init()

    shutil.rmtree(here)

w4 = Worker(level=4)
w4.add_remote_workers(1, num_chips=1)
w4.register("rank0_only:fn", kind=TaskKind.SUB)
try:
    w4.init()
    message = ""
except RuntimeError as e:
    message = str(e)
finally:
    w4.close()
named = all(s in message for s in ("rank 1", "'rank0_only:fn'", "ModuleNotFoundError"))
print(message, file=sys.stderr)
rk.print_result(named, named=named)
sys.exit(0 if named else 1)
