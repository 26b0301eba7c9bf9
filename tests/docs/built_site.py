"""The documentation site, built once per test session (what `./dev docs` builds): the fixture `site`,
which a test module imports by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The site built in this session: each module that imports the fixture has its own copy of it, and
# they share the one build.
_built: list[Path] = []


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built HTML site: Sphinx with every warning an error and every reference resolved."""
    if _built:
        return _built[0]
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "-n", "--keep-going", "-q", "-b", "html"]
    build = subprocess.run(
        [*command, "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"sphinx-build failed:\n{build.stdout}\n{build.stderr}"
    _built.append(out / "html")
    return _built[0]
