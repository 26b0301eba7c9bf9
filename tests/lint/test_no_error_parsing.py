"""No error message is parsed: a failure crosses the stack as a value
(simpler.RunError and its FailureReport, a refused field's FieldRefused), so
nothing in the package or the engine reads one back with a regular
expression, nor reads or edits a caught exception's text (`str(e).startswith`,
`str(e).replace`, `"..." in str(e)`, `e.args[0]`...), nor parses a status line (the
EngineWorker's child_status(): text for people; Worker.child_status() and child_states() give
ChildStatus values). Any use of Python's `re`
or of std::regex fails this test unless it is listed below with what it reads;
a caught exception's text may be passed on whole (`f"{e}"`, `str(e)` as an
argument), never looked into."""

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


def is_text_of(node: ast.AST, name: str) -> bool:
    """Whether `node` is str(name), repr(name) or name.args."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr"):
        return len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == name
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "args"
        and isinstance(node.value, ast.Name)
        and (node.value.id == name)
    )


def text_reads(path: Path) -> list:
    """`line: what` for every place in `path` that looks into a caught exception's text: a method
    called on str(e) or e.args, e.args indexed, or str(e) on either side of `in` / `==`."""
    found = []
    for handler in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(handler, ast.ExceptHandler) or handler.name is None:
            continue
        name = handler.name
        for stmt in handler.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Attribute) and is_text_of(node.value, name):
                    found.append(f"{node.lineno}: .{node.attr} of the text of {name}")
                elif isinstance(node, ast.Subscript) and is_text_of(node.value, name):
                    found.append(f"{node.lineno}: an index into the text of {name}")
                elif isinstance(node, ast.Compare) and any(is_text_of(x, name) for x in [node.left, *node.comparators]):
                    found.append(f"{node.lineno}: a comparison with the text of {name}")
    return found


# What reading a line of text for its parts looks like: str's methods that find, split or compare.
_PARSING_METHODS = {
    "partition", "rpartition", "split", "rsplit", "startswith", "endswith", "find", "rfind", "index",
    "rindex", "removeprefix", "removesuffix", "count",
}  # fmt: skip


def _is_status_call(node: ast.AST) -> bool:
    """Whether `node` calls a method child_status (the status lines: text for people)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "child_status"


def status_reads(path: Path) -> list:
    """`line: what` for every place in `path` that parses a status line of child_status() (a Worker
    or an EngineWorker's): a line taken by index or by a loop over the call, or over a name bound
    to it, then split, searched or compared. A program reads child_states(), whose fields are values."""
    tree = ast.parse(path.read_text(), str(path))
    lists = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _is_status_call(n.value) for t in n.targets
             if isinstance(t, ast.Name)}  # fmt: skip

    def of_status(node: ast.AST) -> bool:
        return _is_status_call(node) or (isinstance(node, ast.Name) and node.id in lists)

    lines = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.For, ast.comprehension)) and of_status(n.iter) and isinstance(n.target, ast.Name):
            lines.add(n.target.id)
    found = []
    for n in ast.walk(tree):
        is_line = (isinstance(n, ast.Name) and n.id in lines) or (isinstance(n, ast.Subscript) and of_status(n.value))
        if not is_line:
            continue
        for parent in ast.walk(tree):
            if isinstance(parent, ast.Attribute) and parent.value is n and parent.attr in _PARSING_METHODS:
                found.append(f"{parent.lineno}: .{parent.attr} of a child_status() line")
            elif isinstance(parent, ast.Compare) and n in [parent.left, *parent.comparators]:
                found.append(f"{parent.lineno}: a comparison with a child_status() line")
    return sorted(set(found))


def test_no_module_of_the_package_parses_a_status_line():
    found = {str(p.relative_to(PACKAGE)): status_reads(p) for p in PACKAGE.rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_a_status_line_parsed(tmp_path):
    parses = [
        "for line in w.child_status():\n    name, _, state = line.partition(': ')",
        "lost = [s for s in w.child_status() if s.endswith('lost')]",
        "lines = core.child_status()\nfor s in lines:\n    ok = 'usable' in s",
        "first = w.child_status()[0].split(':')",
        "same = w.child_status()[1] == 'chip 1: usable'",
    ]
    for parse in parses:
        (tmp_path / "m.py").write_text(parse + "\n")
        assert status_reads(tmp_path / "m.py"), parse
    shown = "print('; '.join(w.child_status()))\nfor s in w.child_states():\n    ok = s.lost\n"
    (tmp_path / "m.py").write_text(shown)
    assert status_reads(tmp_path / "m.py") == []


def test_no_module_of_the_package_looks_into_a_caught_exceptions_text():
    found = {str(p.relative_to(PACKAGE)): text_reads(p) for p in PACKAGE.rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_a_look_into_a_caught_exceptions_text(tmp_path):
    looks = [
        "str(e).startswith('x')",
        "str(e).replace('a', 'b')",
        "'x' in str(e)",
        "e.args[0]",
        "e.args[0].split()",
        "str(e) == 'x'",
    ]
    for look in looks:
        (tmp_path / "m.py").write_text(f"try:\n    f()\nexcept ValueError as e:\n    y = {look}\n")
        assert text_reads(tmp_path / "m.py"), look
    passed_on = "try:\n    f()\nexcept ValueError as e:\n    raise TypeError(f'{e} here') from e\n"
    (tmp_path / "m.py").write_text(passed_on + "except KeyError as k:\n    log(str(k))\n")
    assert text_reads(tmp_path / "m.py") == []


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
