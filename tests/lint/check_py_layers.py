#!/usr/bin/env python3
"""Fails when the Python package's imports break its floors.

python/simpler is built in floors (FLOORS, bottom first, the one place they are
written): a module imports only from its own floor or the floors below it.
Every import counts, wherever it is written: at the top, under
`if TYPE_CHECKING:`, or inside a function. Modules of one floor may import each
other, but no chain of imports may come back to where it started (a cycle).
No module imports another's private name (`from m import _x`, or `m._x` of an
imported module m); the extension `simpler._core` is the package's own native
half, not a private name. No module of the package is over MAX_LINES lines.

Usage: check_py_layers.py [--root DIR]. Prints each finding on stderr and exits
1 when there is one, 0 otherwise.
"""

import ast
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import lint_tree

PACKAGE = "simpler"
SOURCE = Path("python")
MAX_LINES = 600

# Bottom first. A pattern names a module, or with `.*` every module of a subpackage.
FLOORS: List[Tuple[str, List[str]]] = [
    ("the extension", ["simpler._core"]),
    ("the data model", ["simpler.model", "simpler.model.*"]),
    ("the runtime", ["simpler.runtime", "simpler.runtime.*"]),
    ("the tree and the collectives", ["simpler.tree", "simpler.tree.*", "simpler.collectives"]),
    ("the Worker", ["simpler.worker"]),
    (
        "the package's face and its commands",
        [
            "simpler",
            "simpler.__main__",
            "simpler.abi",
            "simpler.buffer",
            "simpler.task_interface",
            "simpler.install_paths",
            "simpler.runtime_libraries",
            "simpler.cli",
            "simpler.cli.*",
        ],
    ),
]


def floor_of(module: str) -> Optional[int]:
    for i, (_name, patterns) in enumerate(FLOORS):
        if any(fnmatchcase(module, p) for p in patterns):
            return i
    return None


def package_modules(root: Path) -> Dict[str, Path]:
    """Every module of the package (tracked .py files under python/simpler), by dotted name; and the extension."""
    modules: Dict[str, Path] = {}
    for name in lint_tree.tracked_files(root):
        path = Path(name)
        if path.suffix != ".py" or path.parts[:2] != (SOURCE.name, PACKAGE):
            continue
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = root / path
    modules[f"{PACKAGE}._core"] = root / SOURCE / PACKAGE / "_core.pyi"
    return modules


def resolve(module: str, node: ast.AST, known: Dict[str, Path]) -> List[Tuple[str, Optional[str]]]:
    """The package modules an import statement in `module` names, each with the name it takes from it
    (None for a module imported whole)."""
    out: List[Tuple[str, Optional[str]]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == PACKAGE:
                out.append((alias.name, None))
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            is_package = known.get(module, Path()).name == "__init__.py"
            parent = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            base = ".".join(parent + ([base] if base else []))
        if base.split(".")[0] != PACKAGE:
            return out
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            out.append((sub, None) if sub in known else (base, alias.name))
    return out


def imports(module: str, tree: ast.Module, known: Dict[str, Path]) -> Iterator[Tuple[int, str, Optional[str]]]:
    """(line, imported module, name taken) for every import in the module, wherever it is written."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target, name in resolve(module, node, known):
                yield node.lineno, target, name


def module_aliases(module: str, tree: ast.Module, known: Dict[str, Path]) -> Dict[str, str]:
    """The local names a module binds to package modules it imports whole (`from simpler.tree import remote`)."""
    aliases: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for target, name in resolve(module, node, known):
                if name is None:
                    alias = next(a for a in node.names if target.endswith(f".{a.name}"))
                    aliases[alias.asname or alias.name] = target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    aliases[alias.asname] = alias.name
    return aliases


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of the import graph (its modules in order, the first repeated last), or None."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(m: str) -> Optional[List[str]]:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def hits(root: Path) -> Iterator[str]:
    known = package_modules(root)
    graph: Dict[str, Set[str]] = {}
    for module, path in sorted(known.items()):
        if path.suffix != ".py":
            continue
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_LINES:
            yield f"{rel}: {lines} lines (the limit for the package's modules is {MAX_LINES})"
        tree = ast.parse(text, str(rel))
        mine = floor_of(module)
        if mine is None:
            yield f"{rel}: module {module} is on no floor; add it to FLOORS in {Path(__file__).name}"
            continue
        for line, target, name in imports(module, tree, known):
            if target == module:
                continue
            graph.setdefault(module, set()).add(target)
            theirs = floor_of(target)
            if theirs is not None and theirs > mine:
                yield (
                    f"{rel}:{line}: {module} ({FLOORS[mine][0]}) imports {target} ({FLOORS[theirs][0]}), a floor "
                    "above it; hand it what it needs instead (a narrow object or a callable)"
                )
            if name is not None and private(name):
                yield f"{rel}:{line}: {module} imports {target}'s private name {name}"
        aliases = module_aliases(module, tree, known)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and private(node.attr):
                target = aliases.get(node.value.id)
                if target is not None and target != f"{PACKAGE}._core":
                    yield f"{rel}:{node.lineno}: {module} reads {target}'s private name {node.attr}"
    found = cycle(graph)
    if found:
        yield "an import cycle: " + " -> ".join(found)


def main() -> int:
    return lint_tree.run(__doc__.splitlines()[0], hits, "{count} finding(s) in the package's imports")


if __name__ == "__main__":
    sys.exit(main())
