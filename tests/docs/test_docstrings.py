"""The API reference is made from the docstrings: every public name of `simpler`, and every public
method and property of each public class, says what it is in a docstring of its own. (An enum's
values are listed with the enum; a nanobind signature line alone is not a docstring.)"""

from __future__ import annotations

import enum
import inspect
import re
import types

import simpler

SIGNATURE_LINE = re.compile(r"^(\w+)?\(.*\)( -> .+)?$")  # nanobind's: `name(self, x: int) -> int`
OVERLOAD_LINE = re.compile(r"^(Overloaded function\.|\d+\. ``.*``)$")
DEFAULT_DOCS = ("Create a collection of name/value pairs.", "An enumeration.")


def prose(doc: str | None) -> list[str]:
    """The lines of a docstring that are not signatures nanobind or a dataclass wrote."""
    lines = [line.strip() for line in (doc or "").splitlines()]
    return [
        line
        for line in lines
        if line
        and not SIGNATURE_LINE.match(line)
        and not OVERLOAD_LINE.match(line)
        and "_simpler_refused_arguments" not in line
        and not line.startswith(DEFAULT_DOCS)
    ]


def member_doc(cls: type, member: str, value: object) -> str | None:
    slots = vars(cls).get("__slots__")
    if isinstance(slots, dict) and member in slots:  # a slot's docstring is its value in a dict __slots__
        return slots[member]
    if isinstance(value, property):
        return value.__doc__ or (value.fget.__doc__ if value.fget else None)
    if isinstance(value, (classmethod, staticmethod)):
        return value.__func__.__doc__
    return getattr(value, "__doc__", None)


def undocumented() -> list[str]:
    missing = []
    for module in (simpler, simpler.abi):
        missing += undocumented_in(module)
    return missing


def undocumented_in(module: types.ModuleType) -> list[str]:
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or callable(obj)):
            continue  # a constant: its entry is in the reference page's text
        doc = obj.__doc__ if not inspect.isclass(obj) or "__doc__" in vars(obj) else None
        if not prose(doc) or (inspect.isclass(obj) and (doc or "").startswith(f"{name}(")):
            missing.append(name)
        if not inspect.isclass(obj):
            continue
        for member, value in vars(obj).items():
            if member.startswith("_") or value is None or isinstance(value, (int, float, str, tuple)):
                continue
            if inspect.isclass(value):
                continue  # a nested type nanobind makes on first use (TaskHandles' iterator), not a member

            if isinstance(obj, enum.EnumMeta) and isinstance(value, obj):
                continue
            if not prose(member_doc(obj, member, value)):
                missing.append(f"{name}.{member}")
    return missing


def test_every_public_name_and_member_has_a_docstring() -> None:
    missing = undocumented()
    assert not missing, f"{len(missing)} public names and members without a docstring: {missing}"


def test_a_signature_alone_is_not_a_docstring() -> None:
    assert not prose(
        "add_tensor(self, tensor: Tensor) -> None\nadd_tensor(self, *args, _simpler_refused_arguments: int = 0)"
    )
    assert not prose("scalar_count(self) -> int")
    assert not prose("(self) -> int")
    assert prose("(self) -> int\n\nHow many scalars.") == ["How many scalars."]
