"""The shipped type stub's layout: nanobind's stubgen output with the blank
lines inside class bodies dropped (between methods, properties and enum
values), which keeps python/simpler/_core.pyi readable and under the project's
1,000-line limit. Nothing but blank lines changes.

    python scripts/compact_stub.py FILE     rewrites FILE in place
"""

import sys


def compact(text: str) -> str:
    """`text` without the blank lines that are followed by an indented line."""
    lines = text.split("\n")
    out = [line for i, line in enumerate(lines)
           if line.strip() or i + 1 >= len(lines) or not lines[i + 1].startswith(" ")]
    return "\n".join(out)


if __name__ == "__main__":
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(compact(text))
