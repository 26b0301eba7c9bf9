"""The installable packages: `./dev wheel` (scripts/build_wheel.py) builds a manylinux wheel per
supported Python that needs one (cp310, cp311, and cp312-abi3 for 3.12 and every later version:
scripts/wheel_pythons.py); each, installed into a fresh venv of its own Python outside the tree, is
all a user needs, on a machine without MPI. Every test runs once per supported Python: 3.13
installs the cp312-abi3 wheel unchanged. A Python absent from this machine is a skip that names
it; SIMPLER_WHEEL_PYTHONS (e.g. "3.11 3.12 3.13", as ./dev test sets it) narrows the set.

The wheel ships the headers, the static libraries, the CMake package and the MPI shim, and neither
its extension nor its shim names MPI or a BLAS; in that venv, with Open MPI's libraries hidden (a
private mount namespace, tests/py/mpi_masking.py, as root), `import simpler`, the README example,
examples/, the demo and `python -m simpler devices` run; `ChipCallable.from_source` builds a chip
kernel library against the wheel's own headers and a Worker's chip runs it; `python -m simpler
--includes` / `--cmakedir` print the installed folders; the C++ example (examples/cpp_host)
configures with `find_package(simpler CONFIG)` (by simpler_DIR and by CMAKE_PREFIX_PATH), builds
its kernel library against simpler::kernel and its host program against simpler::core, and the
program runs a Worker with a chip end to end; and `add_remote_workers` fails naming the MPI library
that is missing. (Not as root, the same checks run with MPI present.)

The fresh venv has no system site-packages; the wheel's dependencies (NumPy, scipy-openblas32) come
from that Python's build environment (wheel_pythons.py: ./dev's .venv for its own Python, else
build/pythons/3.X) through a .pth file naming a folder that holds links to them alone, so `simpler`
can come only from the wheel (each check asserts where it came from). Each wheel is built in its
own build dir, build/wheel-<cp3X> (incremental), never build/py. Select these tests with `pytest -m
wheel`; they take a few minutes a Python (a whole Release build the first time)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from mpi_masking import masked as mask_mpi, why_not_maskable
from test_examples import SMALL_ARGS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from wheel_pythons import SUPPORTED, environment, interpreter, pyproject, wheel_tag, wheel_version, where_looked  # noqa: E402

pytestmark = pytest.mark.wheel

EXAMPLE = ROOT / "examples" / "cpp_host"
CHECK = Path(__file__).with_name("installed_wheel_check.py")
BUILD_WHEEL = ROOT / "scripts" / "build_wheel.py"
BUILD_TIMEOUT = 1200  # seconds: a cold Release build of the whole core on a busy 2-core machine


def _tool(name: str) -> str:
    """A build tool from this interpreter's environment (./dev installs cmake and ninja there), else PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is needed to build the wheel and the C++ example")
    return found


def _run(cmd, *, cwd, env, timeout=600, masked=True):
    """Runs `cmd`; with Open MPI hidden where this machine can hide it (unless `masked` is False)."""
    if masked and why_not_maskable() is None:
        work = Path(tempfile.mkdtemp(prefix="mask-", dir=cwd))
        cmd = mask_mpi(list(map(str, cmd)), work)
    result = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0, (
        f"{cmd} failed ({result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
    )
    return result


def _build_env(work: Path) -> dict:
    """The environment of every build: the tools on PATH, ccache when present (its base dir makes
    the per-run build folders hash alike, so a second run hits), nothing that points into the tree
    (but the run's tag)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMPLER_", "PYTHON"))}
    env["SIMPLER_SHM_TAG"] = os.environ["SIMPLER_SHM_TAG"]  # the run's tag (conftest): its leak checks see these
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["SIMPLER_CACHE_DIR"] = str(work / "kernel-cache")
    if shutil.which("ccache"):
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
        env["CCACHE_BASEDIR"] = str(work)
    return env


def _dependencies_dir(work: Path, python: Path, env: dict) -> Path:
    """A folder holding links to the wheel's dependencies only, as `python`'s environment has them:
    NumPy's package (and its bundled libraries and metadata) and scipy-openblas32's (the BLAS the
    chips load)."""
    only = work / "dependencies-only"
    only.mkdir()
    # scipy_openblas32 is found, not imported: importing it would load its OpenBLAS (and a thread pool).
    where = _run(
        [
            str(python),
            "-c",
            "import importlib.util as u\n"
            "for name in ('numpy', 'scipy_openblas32'):\n"
            "    s = u.find_spec(name)\n"
            "    print(s.origin if s else '')",
        ],
        cwd=work,
        env=env,
        masked=False,
    ).stdout.split("\n")
    for origin, prefix in zip(where[:2], ("numpy", "scipy_openblas32"), strict=True):
        assert origin, f"{prefix} is not installed for {python}"
        site = Path(origin).resolve().parent.parent
        for entry in site.iterdir():
            if entry.name == prefix or entry.name.startswith((f"{prefix}.libs", f"{prefix}-")):
                (only / entry.name).symlink_to(entry)
    return only


def _selected() -> list[str]:
    chosen = os.environ.get("SIMPLER_WHEEL_PYTHONS", "").split()
    return chosen or list(SUPPORTED)


# The wheels built in this session, by the version that built them (3.13 installs 3.12's).
_built: dict[str, Path] = {}


def _wheel(version: str, work: Path, env: dict) -> Path:
    builder = wheel_version(version)
    if builder not in _built:
        dist = Path(tempfile.mkdtemp(prefix=f"simpler-wheel-{builder}-")).resolve()
        out = _run(
            [sys.executable, str(BUILD_WHEEL), "--python", builder, "--out", str(dist)],
            cwd=work,
            env=env,
            timeout=BUILD_TIMEOUT,
            masked=False,
        )
        _built[builder] = Path(out.stdout.strip().splitlines()[-1])
    return _built[builder]


@pytest.fixture(scope="module", autouse=True)
def _remove_built_wheels():
    yield
    for wheel in _built.values():
        shutil.rmtree(wheel.parent, ignore_errors=True)
    _built.clear()


@pytest.fixture(scope="module", params=SUPPORTED)
def installed(request):
    """Builds the wheel of the Python `request.param` installs (or takes the one built already),
    makes a fresh venv of that Python outside the tree and installs the wheel into it.
    Yields (work dir, wheel path, venv path, venv python, environment); removes it all after."""
    version = request.param
    if version not in _selected():
        pytest.skip(f"CPython {version} is not among SIMPLER_WHEEL_PYTHONS={os.environ['SIMPLER_WHEEL_PYTHONS']!r}")
    if interpreter(version) is None:
        pytest.skip(
            f"CPython {version} is absent, its {wheel_tag(version)} wheel unchecked: looked for {where_looked(version)}"
        )
    work = Path(tempfile.mkdtemp(prefix=f"simpler-wheel-test-{version}-")).resolve()
    assert ROOT not in work.parents
    try:
        env = _build_env(work)
        wheel = _wheel(version, work, env)
        assert wheel.name.startswith("simpler_runtime-") and f"-{wheel_tag(version)}-" in wheel.name, wheel
        venv = work / "venv"
        _run([str(interpreter(version)), "-m", "venv", "--without-pip", str(venv)], cwd=work, env=env, masked=False)
        py = venv / "bin" / "python"
        purelib = _run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work, env=env
        ).stdout.strip()
        dependencies = _dependencies_dir(work, environment(version), env)
        Path(purelib, "dependencies_only.pth").write_text(f"{dependencies}\n")
        _run(
            [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", str(wheel)],
            cwd=work,
            env=env,
            masked=False,
        )
        yield work, wheel, venv, py, env
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_classifiers_name_the_pythons_the_wheels_are_checked_on():
    project = pyproject()["project"]
    named = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.fullmatch(r".*Python :: 3\.\d+", c)]
    assert named == list(SUPPORTED)
    assert project["requires-python"] == f">={SUPPORTED[0]}"
    assert [wheel_tag(v) for v in SUPPORTED] == ["cp310-cp310", "cp311-cp311", "cp312-abi3", "cp312-abi3"]


def test_the_wheel_ships_headers_static_libraries_and_the_cmake_package(installed):
    _work, wheel, _venv, _py, _env = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for header in (
            "chip/library_abi.h",
            "chip/kernel_api.h",
            "chip/orchestration_api.h",
            "task_interface/tensor.h",
            "engine/worker.h",
            "engine/worker_config.h",
            "backing/fork_owner.h",
        ):
            assert f"simpler/include/simpler/{header}" in names, header
        # A module's internal/ headers are its machinery (the Worker's Impl): never shipped.
        assert not [n for n in names if "/internal/" in n and n.startswith("simpler/include/")]
        for module in ("task_interface", "ipc", "view", "backing", "chip", "deps", "engine", "remote"):
            archive = f"simpler/lib/libsimpler_{module}.a"
            assert archive in names, archive
            # Plain machine code: no compiler's LTO bytecode, so any compiler links it.
            assert b".gnu.lto_" not in z.read(archive), archive
        assert "simpler/lib/libsimpler_mpi.so" in names  # the MPI shim: MPI is loaded at run time
        for f in ("simplerConfig.cmake", "simplerConfigVersion.cmake", "simplerTargets.cmake"):
            assert f"simpler/lib/cmake/simpler/{f}" in names, f
        (core,) = [n for n in names if n.startswith("simpler/_core.") and n.endswith(".so")]
        # The extension finds its headers beside itself, never in the tree it was built from.
        assert str(ROOT).encode() not in z.read(core)
        assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "simpler/tests"))]


def test_from_source_builds_a_kernel_against_the_wheels_headers_and_a_chip_runs_it(installed):
    work, _wheel, venv, py, env = installed
    app = work / "app"
    app.mkdir(exist_ok=True)
    kernels = shutil.copy(EXAMPLE / "kernels.cpp", app / "kernels.cpp")
    result = _run([str(py), str(CHECK), str(kernels), str(venv)], cwd=app, env=env, timeout=300)
    assert result.stdout.strip().endswith("installed wheel: ok"), result.stdout
    # The library went to this run's cache, built from the wheel's headers.
    assert list((work / "kernel-cache" / "chip-libs").glob("*.so"))


def test_the_command_line_prints_the_installed_include_and_cmake_dirs(installed):
    work, _wheel, venv, py, env = installed
    includes = _run([str(py), "-m", "simpler", "--includes"], cwd=work, env=env).stdout.strip()
    assert includes.startswith("-I"), includes
    include = Path(includes[2:])
    assert venv in include.parents and (include / "simpler" / "chip" / "library_abi.h").is_file()
    cmakedir = Path(_run([str(py), "-m", "simpler", "--cmakedir"], cwd=work, env=env).stdout.strip())
    assert venv in cmakedir.parents and (cmakedir / "simplerConfig.cmake").is_file()
    both = _run([str(py), "-m", "simpler", "--includes", "--cmakedir"], cwd=work, env=env).stdout.split()
    assert both == [includes, str(cmakedir)]


def test_a_cpp_host_program_builds_with_find_package_and_runs_a_worker_with_a_chip(installed):
    work, _wheel, venv, py, env = installed
    cmakedir = _run([str(py), "-m", "simpler", "--cmakedir"], cwd=work, env=env).stdout.strip()
    project = work / "cpp_host"
    shutil.copytree(EXAMPLE, project)
    cmake = _tool("cmake")
    generator = ["-G", "Ninja"] if shutil.which("ninja", path=env["PATH"]) else []
    _run(
        [
            cmake,
            "-S",
            str(project),
            "-B",
            str(project / "build"),
            *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-Dsimpler_DIR={cmakedir}",
        ],
        cwd=work,
        env=env,
    )
    _run([cmake, "--build", str(project / "build")], cwd=work, env=env, timeout=BUILD_TIMEOUT)
    result = _run([str(project / "build" / "cpp_host")], cwd=work, env=env, timeout=120)
    assert result.stdout.startswith("cpp_host: ok, task"), result.stdout + result.stderr
    # find_package also finds it on CMAKE_PREFIX_PATH, and the targets point into the venv.
    configured = _run(
        [
            cmake,
            "-S",
            str(project),
            "-B",
            str(project / "build-prefix-path"),
            *generator,
            f"-DCMAKE_PREFIX_PATH={cmakedir}",
        ],
        cwd=work,
        env=env,
    )
    assert "Configuring done" in configured.stdout, configured.stdout
    cache = (project / "build-prefix-path" / "CMakeCache.txt").read_text()
    assert f"simpler_DIR:PATH={cmakedir}" in cache, cache
    assert str(venv) in cmakedir


def test_the_wheel_is_manylinux_and_its_libraries_name_no_mpi_and_no_blas(installed):
    work, wheel, venv, _py, env = installed
    assert re.search(r"-manylinux_2_\d+_x86_64\.whl$", wheel.name), wheel.name
    shown = _run([_tool("auditwheel"), "show", str(wheel)], cwd=work, env=env, masked=False)
    assert re.search(r'consistent with\s+the following platform tag: "manylinux_2_\d+_x86_64"', shown.stdout), (
        shown.stdout
    )
    (core,) = venv.glob("lib/python*/site-packages/simpler/_core.*.so")
    (shim,) = venv.glob("lib/python*/site-packages/simpler/lib/libsimpler_mpi.so")
    for elf in (core, shim):
        linked = _run(["ldd", str(elf)], cwd=work, env=env).stdout
        assert not re.search(r"libmpi|libopen-(rte|pal)|blas|lapack", linked), (elf, linked)
        assert "not found" not in linked, (elf, linked)


def test_the_readme_example_and_every_example_run_where_mpi_is_not_installed(installed):
    work, _wheel, _venv, py, env = installed
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme[readme.index("## Example") :], re.S).group(1)
    _run([str(py), "-c", code], cwd=work, env=env, timeout=300)
    for name, args in SMALL_ARGS.items():
        if name == "training_step":  # needs torch, which the fresh venv has not (tests/py/test_examples.py runs it)
            continue
        result = _run([str(py), str(ROOT / "examples" / f"{name}.py"), *args], cwd=work, env=env, timeout=300)
        assert result.returncode == 0, (name, result.stdout, result.stderr)


def test_the_demo_and_the_devices_command_run(installed):
    work, _wheel, _venv, py, env = installed
    demo = _run([str(py), "-m", "simpler", "demo"], cwd=work, env=env, timeout=300).stdout
    assert "C matches NumPy: True; row-block sums match NumPy: True" in demo, demo
    devices = _run([str(py), "-m", "simpler", "devices"], cwd=work, env=env, timeout=120).stdout
    assert devices.startswith("simulated: always available"), devices
    # The wheel was built with the CUDA headers (its build environment's nvidia-cuda-* wheels): it
    # drives CUDA devices where a driver is, and says which driver it looked for where none is.
    (cuda,) = [line for line in devices.splitlines() if line.startswith("cuda:")]
    assert "drives no CUDA devices" not in cuda, cuda


@pytest.mark.skipif(why_not_maskable() is not None, reason=str(why_not_maskable()))
def test_without_mpi_add_remote_workers_fails_naming_the_missing_library(installed):
    work, _wheel, _venv, py, env = installed
    code = (
        "from simpler import Worker\n"
        "w = Worker(level=4)\n"
        "try:\n"
        "    w.add_remote_workers(1, num_chips=1)\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    out = _run([str(py), "-c", code], cwd=work, env=env).stdout
    assert out.startswith(
        "Worker.add_remote_workers: remote: MPI could not be loaded: libmpi.so.40 did not load: "
        "libmpi.so.40: cannot open shared object file"
    ), out
    assert "apt install openmpi-bin" in out, out
