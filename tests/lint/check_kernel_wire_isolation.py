#!/usr/bin/env python3
"""Wire isolation lint: the L3+ wire headers (buffer.h, task_args_wire.h) must
not reach a kernel or chip-orchestration translation unit.

Builds the project's include graph (quoted includes, resolved from src/ and from
the including file's folder), marks every header that includes a wire header
directly or transitively, and fails on any file outside the allowlist that
includes one of them, printing the include chain. The allowlist
(wire_isolation_allowlist.txt beside this script) names the places that
genuinely handle the L3+ form, as glob patterns relative to the repo root.

Usage: check_kernel_wire_isolation.py [--root REPO] ; exit 0 clean, 1 violations.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from pathlib import Path

WIRE_HEADERS = ("src/simpler/task_interface/buffer.h", "src/simpler/task_interface/task_args_wire.h")
SCANNED_SUFFIXES = {".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cxx"}
SKIPPED_DIRS = {"build", ".git", "third_party", "__pycache__"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def load_allowlist(path: Path) -> list[str]:
    patterns = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            patterns.append(line)
    return patterns


def source_files(root: Path) -> list[Path]:
    out = []
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if any(part in SKIPPED_DIRS or part.startswith("build") for part in rel.parts[:-1]):
            continue
        if p.is_file() and p.suffix in SCANNED_SUFFIXES:
            out.append(p)
    return sorted(out)


def resolve(root: Path, includer: Path, name: str) -> str | None:
    for base in (includer.parent, root / "src"):
        candidate = (base / name).resolve()
        try:
            rel = candidate.relative_to(root.resolve())
        except ValueError:
            continue
        if candidate.is_file():
            return rel.as_posix()
    return None


def check(root: Path, allowlist: list[str]) -> list[str]:
    files = source_files(root)
    graph: dict[str, list[str]] = {}
    for f in files:
        rel = f.relative_to(root).as_posix()
        text = f.read_text(errors="replace")
        deps = [resolve(root, f, name) for name in INCLUDE_RE.findall(text)]
        graph[rel] = [d for d in deps if d]

    # chain[h] = include chain from h down to a wire header, for every tainted header.
    chain: dict[str, list[str]] = {w: [w] for w in WIRE_HEADERS}
    changed = True
    while changed:
        changed = False
        for f, deps in graph.items():
            if f in chain or not f.endswith((".h", ".hpp", ".hh")):
                continue
            for d in deps:
                if d in chain:
                    chain[f] = [f] + chain[d]
                    changed = True
                    break

    violations = []
    for f, deps in sorted(graph.items()):
        if f in WIRE_HEADERS or any(fnmatch.fnmatch(f, pat) for pat in allowlist):
            continue
        for d in deps:
            if d in chain:
                violations.append(f"{f}: includes {' -> '.join(chain[d])} (not allowlisted)")
                break
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--allowlist", type=Path, default=Path(__file__).with_name("wire_isolation_allowlist.txt"))
    args = parser.parse_args(argv)
    violations = check(args.root.resolve(), load_allowlist(args.allowlist))
    for v in violations:
        print(f"wire isolation: {v}", file=sys.stderr)
    if violations:
        print(
            f"wire isolation: {len(violations)} file(s) reach the L3+ wire headers; kernels and chip "
            "orchestrations see ChipTensor and the runtime tensor only (docs/abi.md).",
            file=sys.stderr,
        )
        return 1
    print("wire isolation: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
