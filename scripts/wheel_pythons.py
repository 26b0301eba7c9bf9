"""The Pythons the wheels are built for and checked on, and the environment each is built in.

    python scripts/wheel_pythons.py [VERSION ...]    # make (or bring up to date) each one's environment
    python scripts/wheel_pythons.py --find VERSION   # print the interpreter's path (exit 1: absent)

Supported: CPython 3.10, 3.11, 3.12 and 3.13. 3.10 and 3.11 each get a wheel of their own; the
one built on 3.12 is cp312-abi3 (the extension uses only the limited API), the wheel of 3.12 and
every later version, so 3.13 is checked with it and never builds one.

An interpreter is found as `python3.X` on PATH (one that runs: a pyenv shim of a version not
selected does not), else in pyenv's versions folder (the highest patch release), else in /usr/bin
or /usr/local/bin. Its build environment is the running interpreter's own when the versions match
(./dev's .venv, which has everything), else build/pythons/3.X: a venv holding the project's build
requirements and dependencies as pyproject.toml names them, made once and brought up to date when
that list changes (PyPI is asked only then)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip's own copy of the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
ABI3_FROM = "3.12"  # the cp312-abi3 wheel serves this version and every later one
ENVS = ROOT / "build" / "pythons"
PIP = "pip>=24"
RUNNING = "%d.%d" % sys.version_info[:2]  # the version of the Python running this


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def wheel_version(version: str) -> str:
    """The version whose wheel `version` installs: its own before 3.12, else 3.12's (abi3)."""
    return version if _key(version) < _key(ABI3_FROM) else ABI3_FROM


def wheel_tag(version: str) -> str:
    """The wheel's Python tag, as its file name has it: cp310, cp311, cp312-abi3."""
    built = wheel_version(version)
    tag = "cp" + built.replace(".", "")
    return f"{tag}-abi3" if built == ABI3_FROM else f"{tag}-{tag}"


def _runs_as(python: str | Path, version: str) -> bool:
    try:
        out = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def where_looked(version: str) -> str:
    return f"python{version} on PATH, {_pyenv_root()}/versions/{version}.*, /usr/bin, /usr/local/bin"


def interpreter(version: str) -> Path | None:
    """CPython `version` on this machine, or None."""
    if version == RUNNING:
        return Path(sys.executable)
    name = f"python{version}"
    candidates: list[str | Path] = []
    on_path = shutil.which(name)
    if on_path:
        candidates.append(on_path)
    patches = sorted(
        (_pyenv_root() / "versions").glob(f"{version}.*"),
        key=lambda p: [int(n) if n.isdigit() else -1 for n in re.split(r"[.]", p.name)],
        reverse=True,
    )
    candidates += [p / "bin" / name for p in patches]
    candidates += [Path("/usr/bin") / name, Path("/usr/local/bin") / name]
    return next((Path(c) for c in candidates if Path(c).is_file() and _runs_as(c, version)), None)


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirements() -> list[str]:
    """What a build environment holds: pyproject.toml's build requirements and dependencies."""
    project = pyproject()
    return [*project["build-system"]["requires"], *project["project"]["dependencies"]]


def environment(version: str) -> Path:
    """The Python of `version`'s build environment, made or brought up to date first; SystemExit
    when `version` is not on this machine or the environment cannot be made."""
    if version == RUNNING:
        return Path(sys.executable)
    base = interpreter(version)
    if base is None:
        absent = f"CPython {version} is not on this machine (looked for {where_looked(version)})"
        raise SystemExit(f"wheel_pythons: {absent}")
    env = ENVS / version
    python = env / "bin" / "python"
    # pip itself first: an old interpreter's pip has no -C (--config-settings) for `pip wheel`.
    wanted = "\n".join([PIP, *requirements()]) + "\n"
    record = env / "requirements.txt"
    if python.exists() and record.exists() and record.read_text() == wanted:
        return python
    print(f"wheel_pythons: making {env} ({base})", file=sys.stderr)
    if not python.exists():
        subprocess.run([str(base), "-m", "venv", str(env)], check=True, stdin=subprocess.DEVNULL)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", PIP, *requirements()],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    record.write_text(wanted)
    return python


def main(argv: list[str]) -> int:
    if argv[:1] == ["--find"] and len(argv) == 2:
        found = interpreter(argv[1])
        if found is None:
            print(
                f"wheel_pythons: CPython {argv[1]} is not on this machine (looked for {where_looked(argv[1])})",
                file=sys.stderr,
            )
            return 1
        print(found)
        return 0
    for version in argv or SUPPORTED:
        if version not in SUPPORTED:
            raise SystemExit(f"wheel_pythons: {version} is not a supported Python ({', '.join(SUPPORTED)})")
        if interpreter(version) is None:
            print(f"wheel_pythons: CPython {version} is absent (looked for {where_looked(version)})")
            continue
        print(f"{version}: {environment(version)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
