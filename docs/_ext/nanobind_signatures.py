"""Sphinx extension: a nanobind function's docstring as its reference entry.

Every bound function of simpler._core has a second overload that takes anything and names the
refused arguments (python/bindings/refused_arguments.h). nanobind writes each overload's signature
at the top of `__doc__` and, for an overloaded function, an "Overloaded function." list of each
overload's docstring. The entry shows only the real overloads: this extension drops the catch-all's
signature and list item, and unwraps the list when one overload is left.
"""

from __future__ import annotations

import re
from typing import Any

import public_names

REFUSED_MARK = "_simpler_refused_arguments"
_ITEM = re.compile(r"^(\d+)\. ``(.*)``$")


def real_overloads(lines: list[str]) -> list[str]:
    """The docstring lines without the catch-all overload's item, the list unwrapped if one is left."""
    if "Overloaded function." not in lines:
        return lines
    head = lines[: lines.index("Overloaded function.")]
    items: list[list[str]] = []
    for line in lines[lines.index("Overloaded function.") + 1 :]:
        if _ITEM.match(line):
            items.append([line])
        elif items:
            items[-1].append(line)
    items = [item for item in items if REFUSED_MARK not in item[0]]
    if len(items) == 1:
        body = items[0][1:]
        while body and not body[0].strip():
            body.pop(0)
        return head + body
    out = [*head, "Overloaded function.", ""]
    for k, item in enumerate(items, 1):
        out += [_ITEM.sub(lambda m, k=k: f"{k}. ``{m.group(2)}``", item[0]), *item[1:]]
    return out


_GETTER_SIGNATURE = re.compile(r"^\(self\) -> (.+)$")


def _docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    lines[:] = real_overloads(lines)
    # A nanobind property with no docstring of its own has its getter's signature as one (autodoc
    # shows no type for a property it cannot introspect): the entry says the type.
    match = _GETTER_SIGNATURE.match(lines[0]) if what == "property" and lines else None
    if match:
        lines[0] = f"Type: `{public_names.rewrite(match.group(1))}`"


def _drop_catch_all_signatures(app: Any, doctree: Any) -> None:
    """doctree-read: an entry's signature lines without the catch-all overload's."""
    from sphinx import addnodes

    for signature in list(doctree.findall(addnodes.desc_signature)):
        if REFUSED_MARK in signature.astext():
            if len(signature.parent.children) > 2:  # another signature stays (the last child is the content)
                signature.parent.remove(signature)
            else:
                raise ValueError(f"{signature.astext()}: a refused-arguments catch-all with no real overload")


def setup(app: Any) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", _docstring)

    app.connect("doctree-read", _drop_catch_all_signatures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
