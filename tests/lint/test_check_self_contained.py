"""The repository stands alone: no tracked file names a path outside it for its
design (docs/ holds the design). The lint passes on this tree and flags each
kind of outside reference with its file and line, but not a docs/ page."""

import subprocess
import sys
from pathlib import Path

import pytest

LINT = Path(__file__).with_name("check_self_contained.py")
REPO = LINT.parents[2]


def run_lint(root):
    return subprocess.run([sys.executable, str(LINT), "--root", str(root)], capture_output=True, text=True)


def test_the_project_tree_is_clean():
    result = run_lint(REPO)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "line",
    [
        "// see " + ".." + "/shared" + "/design/notes",
        "# the layout is pinned in " + "ABI" + ".md",
        "rules: " + "DEPENDENCIES" + ".md, 'Tags'",
        "(" + "ARCHITECTURE" + ".md)",
        "seed: buffer-tensor-memory-" + "model.md",
    ],
)
def test_an_outside_reference_fails_naming_file_and_line(tmp_path, line):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.h").write_text("// fine\n" + line + "\n")
    result = run_lint(tmp_path)
    assert result.returncode == 1
    assert "src/a.h:2:" in result.stderr


def test_a_docs_page_is_fine(tmp_path):
    (tmp_path / "a.h").write_text(
        "// pinned in docs/internals/abi.md; rules in docs/explanation/dependencies.md and\n"
        "// docs/explanation/architecture.md\n"
    )
    result = run_lint(tmp_path)
    assert result.returncode == 0, result.stderr
