"""The shipped type stub python/simpler/_core.pyi is exactly what nanobind's
stubgen makes of the built module (laid out by scripts/compact_stub.py): a
binding change without a regenerated stub fails here (regenerate with
scripts/gen_stub.sh)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "python" / "simpler" / "_core.pyi"


def _compact(text: str) -> str:
    spec = importlib.util.spec_from_file_location("compact_stub", ROOT / "scripts" / "compact_stub.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compact(text)


def test_stub_matches_the_built_module(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "simpler._core", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    assert _compact(out.read_text()) == STUB.read_text(), "python/simpler/_core.pyi is stale: run scripts/gen_stub.sh"


def test_compact_joins_only_short_docstrings_after_a_header():
    text = "\n".join([
        "class A:",
        '    """',
        "    Short.",
        '    """',
        "    def f(self) -> None:",
        '        """',
        "        " + "x" * 120,
        '        """',
        "    def g(self) -> None:",
        '        """',
        "        Two",
        "        lines.",
        '        """',
        "    def h(self) -> None:",
        '        """',
        "        Short too.",
        '        """',
        "",
    ])
    assert _compact(text).split("\n") == [
        "class A:",
        '    """Short."""',
        "    def f(self) -> None:",
        '        """',
        "        " + "x" * 120,  # 128 columns once joined: left as it is
        '        """',
        "    def g(self) -> None:",
        '        """',
        "        Two",
        "        lines.",
        '        """',  # a closing quote, then a def line and a quote: not a docstring to join
        "    def h(self) -> None:",
        '        """Short too."""',
        "",
    ]
