"""The native libraries simpler finds at run time instead of linking them, so
that the wheel imports on any Linux: the BLAS the standard chip kernels call.

The BLAS comes from the scipy-openblas32 wheel (a dependency: the OpenBLAS
NumPy's and SciPy's maintainers publish); ``register()`` hands its path to the
extension at import, and a chip process loads it the first time a kernel needs
it, serially (docs/chip.md). ``SIMPLER_BLAS`` in the environment overrides it:
another library, or ``none`` for the portable loops."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from simpler import _core

_OPENBLAS_WHEEL = "scipy_openblas32"
_OPENBLAS_FILE = "libscipy_openblas.so"


def wheel_blas_path() -> Path | None:
    """The scipy-openblas32 wheel's library, found without importing the wheel; None where it is not
    installed."""
    spec = importlib.util.find_spec(_OPENBLAS_WHEEL)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "lib" / _OPENBLAS_FILE
    return path if path.is_file() else None


def register() -> None:
    """Registers the wheel's BLAS with the extension (before any chip process is forked)."""
    path = wheel_blas_path()
    if path is not None:
        _core.set_blas_candidate(str(path))
