#!/usr/bin/env python3
"""Fails when a comment names a function that the code does not have.

A comment that writes a name as a call -- `name()`, `Type::name()` or
`Type.name()` -- promises that the name exists. This lint collects every
identifier token of the code (everything that is not a comment: C++ `//` and
`/* */` comments, Python `#` comments and docstrings; string literals count as
code, since a binding names its Python methods in strings) across the tracked
C++ and Python sources, then checks each call-shaped name in a comment under
src/, python/, benchmarks/ and tests/ against that set and against
comment_symbols_allowlist.txt beside this file (standard or system names that
the code never spells itself). For a qualified name only the last part is
checked.

Usage: check_comment_symbols.py [--root DIR]. Prints file:line: name for each
miss on stderr and exits 1 when there is one, 0 otherwise. Files are the ones
git tracks under DIR (every file when DIR is not a git work tree). Cheap and
deliberately simple: a name that exists anywhere passes, whatever it names.
"""

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

import lint_tree

CPP_SUFFIXES = {".h", ".hpp", ".cpp", ".cc"}
PY_SUFFIXES = {".py", ".pyi"}
SCANNED_DIRS = ("src/", "python/", "benchmarks/", "tests/")
IDENT = re.compile(r"[A-Za-z_]\w*")
# A name written as a call with nothing between the parentheses, optionally
# qualified (Type::name(), module.name()).
CALL = re.compile(r"(?<![\w.:])((?:[A-Za-z_]\w*(?:::|\.))*)([A-Za-z_]\w*)\(\)")
ALLOWLIST = Path(__file__).with_name("comment_symbols_allowlist.txt")


def split_cpp(text: str):
    """Returns (code, comments): code is the text with comments blanked;
    comments is a list of (line, comment text)."""
    code, comments = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, text[i + 2 : j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k, part in enumerate(text[i:j].split("\n")):
                comments.append((line + k, part))
            line += text.count("\n", i, j)
            code.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            code.append(text[i:j])
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            code.append(text[i:j])
            line += text.count("\n", i, j)
            i = j
        else:
            if c == "\n":
                line += 1
            code.append(c)
            i += 1
    return "".join(code), comments


def docstring_lines(tree) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def split_py(text: str):
    try:
        doc = docstring_lines(ast.parse(text))
    except SyntaxError:
        doc = set()
    code, comments = [], []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments.append((tok.start[0], tok.string[1:]))
            elif tok.type == tokenize.STRING and tok.start[0] in doc:
                for k, part in enumerate(tok.string.split("\n")):
                    comments.append((tok.start[0] + k, part))
            else:
                code.append(tok.string)
    except (tokenize.TokenError, IndentationError):
        return text, []
    return " ".join(code), comments


def load_allowlist() -> set[str]:
    if not ALLOWLIST.exists():
        return set()
    names = set()
    for raw in ALLOWLIST.read_text().splitlines():
        raw = raw.split("#", 1)[0].strip()
        if raw:
            names.add(raw)
    return names


def misses(root: Path):
    known = load_allowlist()
    scanned = []
    for name in lint_tree.tracked_files(root):
        suffix = Path(name).suffix
        if suffix not in CPP_SUFFIXES and suffix not in PY_SUFFIXES:
            continue
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        code, comments = (split_cpp if suffix in CPP_SUFFIXES else split_py)(text)
        known.update(IDENT.findall(code))
        if name.startswith(SCANNED_DIRS) and suffix != ".pyi":
            scanned.append((name, comments))
    for name, comments in sorted(scanned):
        for line, comment in comments:
            for m in CALL.finditer(comment):
                if m.group(2) not in known:
                    yield f"{name}:{line}: {m.group(1)}{m.group(2)}() is not a name in the code"


def main() -> int:
    return lint_tree.run(
        __doc__.splitlines()[0],
        misses,
        "{count} comment(s) name a function the code does not have: fix the comment, or add a "
        f"standard name to {ALLOWLIST.name}",
    )


if __name__ == "__main__":
    sys.exit(main())
