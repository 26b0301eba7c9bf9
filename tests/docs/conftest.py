"""The documentation site, built once for the tests of this folder (what `./dev docs` builds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built HTML site: Sphinx with every warning an error and every reference resolved."""
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "-n", "--keep-going", "-q", "-b", "html"]
    build = subprocess.run(
        [*command, "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"sphinx-build failed:\n{build.stdout}\n{build.stderr}"
    return out / "html"
