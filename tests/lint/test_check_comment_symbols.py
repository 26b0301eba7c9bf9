"""Comments name only functions that exist: the comment-symbol lint passes on
this tree, and flags a C++ or Python comment (or docstring) that writes a
missing name as a call, with its file and line, while a name the code defines
or uses, or one on the allowlist, passes."""

import subprocess
import sys
from pathlib import Path

LINT = Path(__file__).with_name("check_comment_symbols.py")
REPO = LINT.parents[2]


def run_lint(root):
    return subprocess.run([sys.executable, str(LINT), "--root", str(root)], capture_output=True, text=True)


def test_the_project_tree_is_clean():
    result = run_lint(REPO)
    assert result.returncode == 0, result.stderr


def write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_cpp_comment_naming_a_missing_function_fails(tmp_path):
    write(
        tmp_path,
        "src/a.h",
        "// Widget: see Widget::size() and child_status().\n"
        "struct Widget { int size() const; };\n"
        "int child_status();\n"
        "// usable_children() says what is left.\n",
    )
    result = run_lint(tmp_path)
    assert result.returncode == 1
    assert "src/a.h:4: usable_children()" in result.stderr
    assert "size()" not in result.stderr and "child_status()" not in result.stderr


def test_a_python_comment_or_docstring_naming_a_missing_function_fails(tmp_path):
    write(
        tmp_path,
        "python/m.py",
        '"""Calls helper() and os.fork()."""\n'
        "import os\n\n\n"
        "def helper():\n"
        "    return os.fork()  # then reap_all()\n"
        "\n\n"
        "def g():\n"
        '    """Like Frob.twiddle()."""\n',
    )
    result = run_lint(tmp_path)
    assert result.returncode == 1
    assert "python/m.py:6: reap_all()" in result.stderr
    assert "python/m.py:10: Frob.twiddle()" in result.stderr
    assert "helper()" not in result.stderr and "fork()" not in result.stderr


def test_names_only_in_comments_or_only_in_strings(tmp_path):
    # A name that appears only in comments does not exist; one a string names
    # (a binding's Python method) does.
    write(tmp_path, "src/b.cpp", '// ghost() and bound_name()\n/* ghost() */\nconst char* k = "bound_name";\n')
    result = run_lint(tmp_path)
    assert result.returncode == 1
    assert "src/b.cpp:1: ghost()" in result.stderr and "src/b.cpp:2: ghost()" in result.stderr
    assert "bound_name" not in result.stderr


def test_comments_outside_the_scanned_folders_are_not_checked(tmp_path):
    write(tmp_path, "scripts/x.py", "# ghost()\n")
    assert run_lint(tmp_path).returncode == 0
