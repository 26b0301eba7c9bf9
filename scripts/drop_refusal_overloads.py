"""The shipped type stub without the refusing overloads.

Every public binding carries one overload, last in its chain, that takes any
arguments and only raises the error naming the bad one
(python/bindings/refused_arguments.h; its signature has the keyword
`_simpler_refused_arguments`). nanobind's stubgen writes it as an `@overload`
like any other; a type checker must not see it, so this drops it, and drops
`@overload` from a function left with one form.

    python scripts/drop_refusal_overloads.py FILE     rewrites FILE in place
"""

import re
import sys

MARK = "_simpler_refused_arguments"
DEF = re.compile(r"^(\s*)def (\w+)\(")


def drop(text: str) -> str:
    """`text` without the refusing overloads and the `@overload` lines they leave alone."""
    lines = text.split("\n")
    kept: list = []
    i = 0
    while i < len(lines):
        # "@overload", perhaps "@staticmethod", then the def
        span = 3 if i + 1 < len(lines) and lines[i + 1].strip() == "@staticmethod" else 2
        if lines[i].strip() == "@overload" and i + span - 1 < len(lines) and MARK in lines[i + span - 1]:
            i += span
            # A top-level def leaves a blank line on each side: keep one.
            if kept and not kept[-1].strip() and i < len(lines) and not lines[i].strip():
                i += 1
            continue
        kept.append(lines[i])
        i += 1
    return "\n".join(single_forms_undecorated(kept))


def single_forms_undecorated(lines: list) -> list:
    """`lines` with `@overload` dropped before each def that is its scope's only form of its name."""
    forms: dict = {}  # (enclosing class, indent, name) -> indices of its @overload lines
    scope = ""
    for i, line in enumerate(lines):
        if line.startswith("class "):
            scope = line
        elif not line.startswith(" ") and line.strip():
            scope = ""
        match = DEF.match(line)
        above = i - 2 if i > 1 and lines[i - 1].strip() == "@staticmethod" else i - 1
        if match and above >= 0 and lines[above].strip() == "@overload":
            forms.setdefault((scope, match.group(1), match.group(2)), []).append(above)
    alone = {at[0] for at in forms.values() if len(at) == 1}
    out = [line for i, line in enumerate(lines) if i not in alone]
    if not any(line.strip() == "@overload" for line in out):
        out = [line for line in out if line != "from typing import overload"]
    return out


if __name__ == "__main__":
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(drop(text))
