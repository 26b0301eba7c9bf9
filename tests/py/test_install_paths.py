"""Where the installed package keeps its headers and CMake package, in the install the tests run
against (the editable dev install; tests/py/test_wheel.py checks a wheel): simpler.get_include()
holds a copy of every header of src/simpler but a module's internal/ ones, get_cmake_dir() holds simplerConfig.cmake,
`python -m simpler --includes` / `--cmakedir` print them, and ChipCallable.from_source compiles
against them unless $SIMPLER_CHIP_INCLUDE_DIR names another folder, which must hold the headers."""

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

import simpler
from simpler import ChipCallable

SRC = Path(__file__).resolve().parents[2] / "src"
KERNELS = Path(__file__).resolve().parents[2] / "examples" / "cpp_host" / "kernels.cpp"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "simpler", *args], capture_output=True, text=True, timeout=60)


def test_get_include_holds_every_header_of_the_tree_as_built():
    include = Path(simpler.get_include())
    assert include.is_absolute() and include.name == "include"
    every = sorted(p.relative_to(SRC) for p in SRC.glob("simpler/**/*.h"))
    internal = [h for h in every if "internal" in h.parts]
    headers = [h for h in every if "internal" not in h.parts]
    assert internal, "no internal/ header in the tree: this test checks they stay out"
    for h in internal:
        assert not (include / h).exists(), f"{h} is machinery, not API: it must not be installed"
    if not simpler._core.remote_available():
        headers = [h for h in headers if "mpi" not in h.parts]
    assert headers
    for h in headers:
        assert (include / h).is_file(), f"{h} is not installed"
        assert filecmp.cmp(include / h, SRC / h, shallow=False), f"the installed {h} differs from src/ (rebuild)"


def test_get_cmake_dir_holds_the_package_config():
    cmake_dir = Path(simpler.get_cmake_dir())
    for f in ("simplerConfig.cmake", "simplerConfigVersion.cmake", "simplerTargets.cmake"):
        assert (cmake_dir / f).is_file(), f
    assert cmake_dir.parent.parent.parent == Path(simpler.get_include()).parent  # simpler/lib/cmake/simpler


def test_the_command_line_prints_the_include_flag_and_the_cmake_dir():
    assert _cli("--includes").stdout == f"-I{simpler.get_include()}\n"
    assert _cli("--cmakedir").stdout == f"{simpler.get_cmake_dir()}\n"
    both = _cli("--includes", "--cmakedir")
    assert both.returncode == 0 and both.stdout.split("\n")[:2] == [
        f"-I{simpler.get_include()}",
        simpler.get_cmake_dir(),
    ]


def test_the_command_line_refuses_a_flag_with_a_command_and_nothing_at_all():
    mixed = _cli("--includes", "wire")
    assert mixed.returncode == 2 and "--includes and --cmakedir take no command (got 'wire')" in mixed.stderr
    nothing = _cli()
    assert nothing.returncode == 2 and "name a command (demo, devices, wire, launch)" in nothing.stderr


def test_from_source_compiles_against_the_installed_headers(tmp_path, monkeypatch):
    monkeypatch.delenv("SIMPLER_CHIP_INCLUDE_DIR", raising=False)
    built = ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path))
    assert built.library.startswith(str(tmp_path))
    # The same source against the same headers named by the environment: the same content key.
    monkeypatch.setenv("SIMPLER_CHIP_INCLUDE_DIR", simpler.get_include())
    assert ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path)).library == built.library


def test_from_source_refuses_an_include_dir_without_the_headers(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMPLER_CHIP_INCLUDE_DIR", str(tmp_path))
    with pytest.raises(RuntimeError) as e:
        ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path / "cache"))
    assert str(e.value) == (
        f"build_library: the include dir {tmp_path} (from $SIMPLER_CHIP_INCLUDE_DIR) holds no "
        "simpler/chip/library_abi.h"
    )
    assert not (tmp_path / "cache").exists()
