"""Runs a command as if Open MPI were not installed: in a private mount namespace (unshare -m, so
root only) whose library folder is an overlay of the real one with every Open MPI library deleted
(libmpi, libopen-rte, libopen-pal, the MCA components, the openmpi folder). Nothing outside the
namespace changes, and it is gone when the command ends."""

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from simpler import _core

_MASK = r"""
set -e
work=$1 lib=$2
shift 2
mount -t tmpfs simpler-mask "$work"
mkdir "$work/upper" "$work/work"
mount -t overlay simpler-mask -o "lowerdir=$lib,upperdir=$work/upper,workdir=$work/work" "$lib"
rm -rf "$lib"/libmpi.so* "$lib"/libmpi_* "$lib"/libopen-rte.so* "$lib"/libopen-pal.so* "$lib"/libmca_* \
       "$lib"/libompitrace* "$lib"/liboshmem* "$lib"/openmpi
exec "$@"
"""


_FIND_MPI = r"""
import simpler
simpler._core.mpi_library()  # loads MPI, then the shim
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if "/libmpi.so" in path:
        print(path)
        break
"""


@functools.lru_cache(maxsize=None)
def mpi_library_dir() -> Optional[Path]:
    """The folder of the libmpi this build loads (as a process maps it); None without MPI."""
    if not _core.remote_available():
        return None
    out = subprocess.run(
        [sys.executable, "-c", _FIND_MPI], capture_output=True, text=True, check=False, timeout=60
    ).stdout.strip()
    return Path(os.path.realpath(out)).parent if out else None


def why_not_maskable() -> Optional[str]:
    """Why this machine cannot hide MPI from a command (None when it can)."""
    if os.geteuid() != 0:
        return "hiding MPI needs root (a private mount namespace)"
    if shutil.which("unshare") is None:
        return "no unshare (util-linux)"
    if mpi_library_dir() is None:
        return "this build has no MPI transport, or its MPI does not load here"
    return None


def masked(cmd: List[str], work: Path) -> List[str]:
    """`cmd` run with Open MPI hidden; `work` is an empty folder the namespace mounts its overlay on."""
    return [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        _MASK,
        "sh",
        str(work),
        str(mpi_library_dir()),
        *cmd,
    ]
