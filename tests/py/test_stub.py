"""The shipped type stub python/simpler/_core.pyi is exactly what nanobind's
stubgen makes of the built module: a binding change without a regenerated stub
fails here (regenerate with scripts/gen_stub.sh)."""

import subprocess
import sys
from pathlib import Path

import pytest

STUB = Path(__file__).resolve().parents[2] / "python" / "simpler" / "_core.pyi"


def test_stub_matches_the_built_module(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "simpler._core", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_text() == STUB.read_text(), "python/simpler/_core.pyi is stale: run scripts/gen_stub.sh"
