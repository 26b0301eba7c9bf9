"""The native libraries simpler finds at run time instead of linking them, so
that the wheel imports on any Linux: the BLAS the standard chip kernels call,
and MPI (through the MPI shim, libsimpler_mpi.so, installed in the package's
lib folder), which only remote Workers need.

The BLAS comes from the scipy-openblas32 wheel (a dependency: the OpenBLAS
NumPy's and SciPy's maintainers publish); ``register()`` hands its path to the
extension at import, and a chip process loads it the first time a kernel needs
it, serially (docs/internals/chip.md). ``SIMPLER_BLAS`` in the environment overrides it:
another library, or ``none`` for the portable loops. The MPI shim is registered
the same way and loaded when a remote Worker is first added or MPI started
(docs/internals/remote.md); ``SIMPLER_MPI_SHIM`` overrides it. NVRTC, which CUDA chips compile
their kernels with, comes from the nvidia-cuda-nvrtc wheel where it is installed (the ``cuda`` extra) and
is registered the same way; ``SIMPLER_NVRTC_LIBRARY`` overrides it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from simpler import _core

_OPENBLAS_WHEEL = "scipy_openblas32"
_OPENBLAS_FILE = "libscipy_openblas.so"
_MPI_SHIM = Path("lib") / "libsimpler_mpi.so"
_NVRTC_FILE = Path("cu13") / "lib" / "libnvrtc.so.13"


def wheel_blas_path() -> Path | None:
    """The scipy-openblas32 wheel's library, found without importing the wheel; None where it is not
    installed."""
    spec = importlib.util.find_spec(_OPENBLAS_WHEEL)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "lib" / _OPENBLAS_FILE
    return path if path.is_file() else None


def wheel_nvrtc_path() -> Path | None:
    """The nvidia-cuda-nvrtc wheel's NVRTC (in the ``nvidia`` namespace package), found without importing
    anything; None where it is not installed."""
    spec = importlib.util.find_spec("nvidia")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / _NVRTC_FILE
        if path.is_file():
            return path
    return None


def mpi_shim_path() -> Path | None:
    """The package's MPI shim (beside the extension, in lib/); None where this build has none."""
    path = Path(_core.__file__).resolve().parent / _MPI_SHIM
    return path if path.is_file() else None


def register() -> None:
    """Registers the wheel's BLAS, the package's MPI shim and the wheel's NVRTC with the extension
    (before any chip process is forked, and before MPI is loaded)."""
    path = wheel_blas_path()
    if path is not None:
        _core.set_blas_candidate(str(path))
    nvrtc = wheel_nvrtc_path()
    if nvrtc is not None:
        _core.set_nvrtc_candidate(str(nvrtc))
    shim = mpi_shim_path()
    if shim is not None and _core.remote_available():
        _core.set_mpi_shim_candidate(str(shim))
