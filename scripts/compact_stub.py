"""The shipped type stub's layout: nanobind's stubgen output with the blank
lines inside class bodies dropped (between methods, properties and enum
values), and each one-line docstring that stubgen spread over three lines put
on one when it fits in 120 columns. This keeps python/simpler/_core.pyi
readable and under the project's 1,000-line limit. Nothing but layout changes.

    python scripts/compact_stub.py FILE     rewrites FILE in place
"""

import sys


def compact(text: str) -> str:
    """`text` without the blank lines that are followed by an indented line."""
    lines = text.split("\n")
    out = [
        line for i, line in enumerate(lines) if line.strip() or i + 1 >= len(lines) or not lines[i + 1].startswith(" ")
    ]
    return "\n".join(join_docstrings(out))


WIDTH = 120  # the project's line length (pyproject.toml)


def join_docstrings(lines: list) -> list:
    """Each `\"\"\"` / one line of text / `\"\"\"` as one line, when it fits in WIDTH."""
    out: list = []
    i = 0
    while i < len(lines):
        opening = lines[i]
        # An opening quote follows its class or def line (a closing one follows text).
        after_header = bool(out) and out[-1].rstrip().endswith(":")
        if after_header and opening.strip() == '"""' and i + 2 < len(lines) and lines[i + 2] == opening:
            text = lines[i + 1].strip()
            one = opening.replace('"""', '"""' + text + '"""')
            if text and '"""' not in text and not text.endswith('"') and len(one) <= WIDTH:
                out.append(one)
                i += 3
                continue
        out.append(opening)
        i += 1
    return out


if __name__ == "__main__":
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(compact(text))
