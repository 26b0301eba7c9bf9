"""The shipped type stub python/simpler/_core.pyi is exactly what nanobind's
stubgen makes of the built module, without the refusing overloads
(scripts/drop_refusal_overloads.py) and laid out by scripts/compact_stub.py: a
binding change without a regenerated stub fails here (regenerate with
scripts/gen_stub.sh). The stub is generated on the default interpreter (3.11); on 3.12 and
later CPython gives every type with a buffer slot `__buffer__` and `__release_buffer__` (PEP 688),
which stubgen lists: that is the interpreter's, not the binding's, and is left out before comparing."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "python" / "simpler" / "_core.pyi"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shipped_form(text: str) -> str:
    text = _script("compact_stub").compact(_script("drop_refusal_overloads").drop(text))
    if sys.version_info >= (3, 12):
        text = re.sub(r'\n    def __(release_)?buffer__\(self, [^\n]*\n        """[^\n]*"""', "", text)
    return text


def test_stub_matches_the_built_module(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nanobind.stubgen",
            "-q",
            "-m",
            "simpler._core",
            "-p",
            str(ROOT / "scripts" / "stub_patterns.txt"),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    stale = "python/simpler/_core.pyi is stale: run scripts/gen_stub.sh"
    assert _shipped_form(out.read_text()) == STUB.read_text(), stale


def test_compact_joins_only_short_docstrings_after_a_header():
    text = "\n".join(
        [
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
        ]
    )
    assert _script("compact_stub").compact(text).split("\n") == [
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


def test_drop_keeps_only_the_real_forms():
    mark = "*args, _simpler_refused_arguments: int = 0, **kwargs) -> object: ..."
    text = "\n".join(
        [
            "from typing import overload",
            "",
            "@overload",
            "def f(x: int) -> int: ...",
            "",
            "@overload",
            "def f(" + mark,
            "",
            "class A:",
            "    @overload",
            "    def g(self, i: int) -> int: ...",
            "    @overload",
            "    def g(self, s: slice) -> list: ...",
            "    @overload",
            "    def g(self, " + mark,
            "    @overload",
            "    @staticmethod",
            "    def h(x: int) -> None: ...",
            "    @overload",
            "    @staticmethod",
            "    def h(" + mark,
            "",
        ]
    )
    assert _script("drop_refusal_overloads").drop(text).split("\n") == [
        "from typing import overload",
        "",
        "def f(x: int) -> int: ...",  # one form left: no @overload
        "",
        "class A:",
        "    @overload",
        "    def g(self, i: int) -> int: ...",  # two real forms stay overloads
        "    @overload",
        "    def g(self, s: slice) -> list: ...",
        "    @staticmethod",
        "    def h(x: int) -> None: ...",
        "",
    ]
