#!/usr/bin/env python3
"""Fails when a tracked file points outside the repository for its design.

The design the code relies on lives in docs/. A file that names the design
notes or the user's document by a path outside the tree (a relative path into
the shared folder beside it, the upper-case design file names, the seed
document's file name) points
at something a reader of this repository does not have. docs/abi.md and the
other lower-case docs/ pages are what such references should name instead.

Usage: check_self_contained.py [--root DIR]. Prints file:line: text for each
hit on stderr and exits 1 when there is one, 0 otherwise. Files are the ones
git tracks under DIR (every file when DIR is not a git work tree); files that
are not UTF-8 text are skipped.
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

# Assembled from pieces so that this file does not match itself.
DOTS = re.escape("..")
PATTERNS = [
    (re.compile(DOTS + r"/shared\b"), "a path into the shared folder outside the repository"),
    (re.compile(r"\bshared/(?:design|seed)/"), "a path into the design folder outside the repository"),
    (re.compile(r"buffer-tensor-memory-" + r"model\.md"), "the seed document (docs/memory-model.md restates it)"),
    (re.compile(r"\b(?:ABI|DEPENDENCIES|ARCHITECTURE)" + r"\.md\b"),
     "an upper-case design file (name docs/abi.md, docs/dependencies.md or docs/architecture.md)"),
]


def tracked_files(root: Path) -> list[Path]:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
        if names:
            return [root / n for n in names]
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
        files += [Path(dirpath) / f for f in filenames]
    return files


def hits(root: Path):
    for path in sorted(tracked_files(root)):
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = ap.parse_args()
    found = list(hits(args.root.resolve()))
    for h in found:
        print(h, file=sys.stderr)
    if found:
        print(f"{len(found)} reference(s) to files outside the repository; name the docs/ page instead",
              file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
