"""No file over 1,000 lines: the lint passes on this tree and names a file past
the limit with its length."""

import subprocess
import sys
from pathlib import Path

LINT = Path(__file__).with_name("check_file_length.py")
REPO = LINT.parents[2]


def run_lint(root):
    return subprocess.run([sys.executable, str(LINT), "--root", str(root)], capture_output=True, text=True)


def test_the_project_tree_is_clean():
    result = run_lint(REPO)
    assert result.returncode == 0, result.stderr


def test_a_long_file_fails_naming_it_and_its_length(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/short.cpp").write_text("int x;\n" * 1000)
    (tmp_path / "src/long.py").write_text("x = 1\n" * 1001)
    result = run_lint(tmp_path)
    assert result.returncode == 1
    assert "src/long.py: 1001 lines (the limit is 1000)" in result.stderr
    assert "short.cpp" not in result.stderr
