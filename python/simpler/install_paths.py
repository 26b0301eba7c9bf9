"""Where the installed package keeps what C++ builds against (docs/internals/packaging.md):

    simpler.get_include()     the root of the headers (simpler/chip/library_abi.h, ...), for -I
    simpler.get_cmake_dir()   the CMake package, for -Dsimpler_DIR= or CMAKE_PREFIX_PATH

Both lie beside the extension module simpler._core: in a wheel, site-packages/simpler/include and
site-packages/simpler/lib/cmake/simpler; in the editable dev install (`./dev setup`) the same
folders of its site-packages/simpler. `ChipCallable.from_source` compiles against these headers
unless $SIMPLER_CHIP_INCLUDE_DIR names others. `python -m simpler --includes` and `--cmakedir`
print them."""

from __future__ import annotations

import os

from simpler import _core

__all__ = ["get_cmake_dir", "get_include"]

_ABI_HEADER = os.path.join("simpler", "chip", "library_abi.h")
_CONFIG = "simplerConfig.cmake"


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(_core.__file__))


def get_include() -> str:
    """The folder to put on the include path (`-I`) to compile chip kernels, orchestrations and C++
    host programs against this simpler: it holds `simpler/<module>/*.h`. RuntimeError when the
    installation has no headers (a build with SIMPLER_INSTALL_PACKAGE=OFF)."""
    path = os.path.join(_package_dir(), "include")
    if not os.path.isfile(os.path.join(path, _ABI_HEADER)):
        raise RuntimeError(
            f"simpler.get_include(): this installation of simpler has no headers ({path} holds no "
            f"{_ABI_HEADER}); reinstall it from a wheel or with `pip install .`"
        )
    return path


def get_cmake_dir() -> str:
    """The folder that holds simplerConfig.cmake, for `find_package(simpler CONFIG)`:
    pass it as -Dsimpler_DIR=... or put it on CMAKE_PREFIX_PATH. RuntimeError when the installation
    has no CMake package."""
    path = os.path.join(_package_dir(), "lib", "cmake", "simpler")
    if not os.path.isfile(os.path.join(path, _CONFIG)):
        raise RuntimeError(
            f"simpler.get_cmake_dir(): this installation of simpler has no CMake package ({path} "
            f"holds no {_CONFIG}); reinstall it from a wheel or with `pip install .`"
        )
    return path
