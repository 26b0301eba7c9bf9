#!/usr/bin/env python3
"""Fails when a tracked file points outside the repository for its design.

The design the code relies on lives in docs/. A file that names the design
notes or the user's document by a path outside the tree (a relative path into
the shared folder beside it, the upper-case design file names, the seed
document's file name) points
at something a reader of this repository does not have. docs/internals/abi.md and the
other lower-case docs/ pages are what such references should name instead.

Usage: check_self_contained.py [--root DIR]. Prints file:line: text for each
hit on stderr and exits 1 when there is one, 0 otherwise. Files are the ones
git tracks under DIR (every file when DIR is not a git work tree); files that
are not UTF-8 text are skipped.
"""

import re
import sys
from pathlib import Path

import lint_tree

# Assembled from pieces so that this file does not match itself.
DOTS = re.escape("..")
PATTERNS = [
    (re.compile(DOTS + r"/shared\b"), "a path into the shared folder outside the repository"),
    (re.compile(r"\bshared/(?:design|seed)/"), "a path into the design folder outside the repository"),
    (
        re.compile(r"buffer-tensor-memory-" + r"model\.md"),
        "the seed document (docs/explanation/memory-model.md restates it)",
    ),
    (
        re.compile(r"\b(?:ABI|DEPENDENCIES|ARCHITECTURE)" + r"\.md\b"),
        "an upper-case design file (name docs/internals/abi.md, docs/explanation/dependencies.md or "
        "docs/explanation/architecture.md)",
    ),
]


def hits(root: Path):
    for path in sorted(root / n for n in lint_tree.tracked_files(root)):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for pattern, why in PATTERNS:
                if pattern.search(line):
                    yield f"{path.relative_to(root)}:{lineno}: {why}: {line.strip()}"
                    break


def main() -> int:
    return lint_tree.run(
        __doc__.splitlines()[0],
        hits,
        "{count} reference(s) to files outside the repository; name the docs/ page instead",
    )


if __name__ == "__main__":
    sys.exit(main())
