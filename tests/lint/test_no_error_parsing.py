"""No error message is parsed: a failure crosses the stack as a value
(simpler.RunError and its FailureReport), so nothing in the package or the
engine reads one back with a regular expression. Any use of Python's `re` or
of std::regex fails this test unless it is listed below with what it reads."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python/simpler"

# Module -> what its regular expressions read (never an error message).
ALLOWED = {
    "cli/launch.py": "the version line of `mpirun --version`",
}


def uses_re(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "re" or a.name.startswith("re.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "re":
            return True
    return False


def test_no_module_of_the_package_uses_regular_expressions_but_the_listed_ones():
    found = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if uses_re(p)}
    assert found - set(ALLOWED) == set(), f"regular expressions in {sorted(found - set(ALLOWED))}"
    assert set(ALLOWED) <= found, f"listed but no longer using re: {sorted(set(ALLOWED) - found)}"


def test_no_cpp_source_uses_std_regex():
    sources = [*REPO.glob("src/**/*.cpp"), *REPO.glob("src/**/*.h"), *REPO.glob("python/bindings/*.cpp")]
    assert sources
    assert [str(p) for p in sources if "std::regex" in p.read_text() or "<regex>" in p.read_text()] == []


def test_the_check_finds_an_import_of_re(tmp_path):
    for text in ("import re\n", "from re import match\n", "def f():\n    import re as r\n"):
        (tmp_path / "m.py").write_text(text)
        assert uses_re(tmp_path / "m.py"), text
    (tmp_path / "m.py").write_text("import requests\nfrom simpler import re_x\n")
    assert not uses_re(tmp_path / "m.py")
