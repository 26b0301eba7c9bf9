"""The Python package's floors: the lint passes on this tree, and names each
kind of break (an import up a floor, wherever it is written; a cycle; a private
name; a module too long) in a small package laid out like this one."""

import subprocess
import sys
from pathlib import Path

LINT = Path(__file__).with_name("check_py_layers.py")
REPO = LINT.parents[2]


def run_lint(root):
    return subprocess.run([sys.executable, str(LINT), "--root", str(root)], capture_output=True, text=True)


def package(tmp_path, files):
    """A package python/simpler under tmp_path (not a git work tree: every file counts) with `files`."""
    base = tmp_path / "python/simpler"
    for name, text in {
        "__init__.py": "",
        "model/__init__.py": "",
        "runtime/__init__.py": "",
        "model/buffer.py": "X = 1\n",
        "runtime/state.py": "",
        **files,
    }.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    return tmp_path


def test_the_project_tree_is_clean():
    result = run_lint(REPO)
    assert result.returncode == 0, result.stderr


def test_a_clean_package_passes(tmp_path):
    result = run_lint(
        package(
            tmp_path, {"runtime/runs.py": "from simpler.model.buffer import X\nfrom simpler.runtime import state\n"}
        )
    )
    assert result.returncode == 0, result.stderr


def test_an_import_up_a_floor_fails_wherever_it_is_written(tmp_path):
    up = "simpler.model.buffer (the data model) imports simpler.runtime.state (the runtime), a floor above it"
    for text in (
        "from simpler.runtime.state import S\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from simpler.runtime.state import S\n",
        "def f():\n    from simpler.runtime import state\n    return state\n",
        "import simpler.runtime.state\n",
        "from ..runtime.state import S\n",
    ):
        result = run_lint(package(tmp_path, {"model/buffer.py": text}))
        assert result.returncode == 1, text
        assert up in result.stderr, (text, result.stderr)


def test_a_cycle_within_a_floor_fails_naming_it(tmp_path):
    result = run_lint(
        package(
            tmp_path,
            {"runtime/a.py": "from simpler.runtime import b\n", "runtime/b.py": "from simpler.runtime.a import f\n"},
        )
    )
    assert result.returncode == 1
    assert "an import cycle: simpler.runtime.a -> simpler.runtime.b -> simpler.runtime.a" in result.stderr


def test_a_private_name_of_another_module_fails(tmp_path):
    result = run_lint(
        package(
            tmp_path,
            {
                "runtime/a.py": "from simpler.model.buffer import _cache\n",
                "runtime/b.py": "from simpler.model import buffer\nbuffer._cache.clear()\n",
                "runtime/c.py": "from simpler import _core\n_core.f()\n",
            },
        )
    )
    assert result.returncode == 1
    assert "runtime/a.py:1: simpler.runtime.a imports simpler.model.buffer's private name _cache" in result.stderr
    assert "runtime/b.py:2: simpler.runtime.b reads simpler.model.buffer's private name _cache" in result.stderr
    assert "runtime/c.py" not in result.stderr  # the extension is the package's own


def test_a_long_module_and_a_module_on_no_floor_fail(tmp_path):
    result = run_lint(package(tmp_path, {"runtime/long.py": "x = 1\n" * 601, "extra.py": ""}))
    assert result.returncode == 1
    assert "runtime/long.py: 601 lines (the limit for the package's modules is 600)" in result.stderr
    assert "module simpler.extra is on no floor" in result.stderr
