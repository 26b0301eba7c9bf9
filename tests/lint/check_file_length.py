#!/usr/bin/env python3
"""Fails when a tracked source or documentation file is over 1,000 lines.

One concept per file keeps files short; a file past the limit holds more than
one and should be split. Counted: C++ (.h, .cpp), Python (.py, .pyi), CMake
and Markdown files that git tracks under DIR (every file when DIR is not a git
work tree); fuzz corpora, other data and generated files (GENERATED) are not.

Usage: check_file_length.py [--root DIR]. Prints file: N lines for each file
over the limit on stderr and exits 1 when there is one, 0 otherwise.
"""

import sys
from pathlib import Path

import lint_tree

LIMIT = 1000
SUFFIXES = {".h", ".cpp", ".py", ".pyi", ".md", ".cmake", ".txt"}
# Made by a tool, not written: the extension's type stub is nanobind's stubgen
# output for the whole module (test_stub.py keeps it equal to it), one file
# that grows with every binding; the bindings it is made from are counted.
GENERATED = {"python/simpler/_core.pyi"}


def hits(root: Path):
    for name in sorted(lint_tree.tracked_files(root)):
        path = root / name
        if path.suffix not in SUFFIXES or "corpus" in path.parts or name in GENERATED:
            continue
        try:
            count = len(path.read_text(encoding="utf-8").splitlines())
        except (UnicodeDecodeError, OSError):
            continue
        if count > LIMIT:
            yield f"{name}: {count} lines (the limit is {LIMIT})"


def main() -> int:
    return lint_tree.run(__doc__.splitlines()[0], hits, "{count} file(s) over the length limit; split them")


if __name__ == "__main__":
    sys.exit(main())
