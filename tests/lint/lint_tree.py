"""What the tree lints share: the files they read and their command line.

tracked_files(root) is every file git tracks under root (every file below it,
build/ and dot-folders left out, when root is not a git work tree); run(...) is
a lint's main(): --root DIR, each finding on stderr, a summary line, exit 1
when there is a finding and 0 otherwise."""

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable


def tracked_files(root: Path) -> list[str]:
    """Paths relative to root."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
        if names:
            return names
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    names = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
        names += [str((Path(dirpath) / f).relative_to(root)) for f in filenames]
    return names


def run(description: str, findings: Callable[[Path], Iterable[str]], summary: str) -> int:
    """Parses --root, prints every finding and `summary` (formatted with {count})."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = ap.parse_args()
    found = list(findings(args.root.resolve()))
    for f in found:
        print(f, file=sys.stderr)
    if found:
        print(summary.format(count=len(found)), file=sys.stderr)
    return 1 if found else 0
