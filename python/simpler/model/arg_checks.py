"""Argument checks for the Python entry points that do not go straight into a
bound C++ function (whose binding checks them itself, python/bindings/checked_args.h).

The rules are the binding's: an int is an int or has __index__ (a NumPy integer
scalar is one); a bool, a float or anything else is a TypeError; a value out of
range is a ValueError. Each message names the field, the rule and the offending
value, as docs/reference/errors.md writes them: `<function>.<field>[<slot>]: <rule> (got <value>)`.

`text()` is the one way a Python string from user code (a callable's name) is
made safe to cross into C++: what UTF-8 cannot encode is backslash-escaped.
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple, Type, TypeVar

import numpy as np

T = TypeVar("T")


def got(value: object) -> str:
    """The "(got ...)" part of a message: the type and repr of `value`."""
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"{type(value).__name__} {text(repr(value))}"


def text(s: str) -> str:
    """`s` with every code point UTF-8 cannot encode (a lone surrogate) written as
    a backslash escape."""
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def check_int(field: str, value: Any, minimum: Optional[int] = 0, bits: Optional[int] = None) -> int:
    """`value` as an int >= minimum (None: no bound) that fits `bits` unsigned
    bits (None: no bound): TypeError for a bool or a non-integer, ValueError out
    of range."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{field}: expected an int, not a bool (got {got(value)})")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{field}: expected an int (got {got(value)})") from None
    if minimum is not None and n < minimum:
        rule = "must be > 0" if minimum == 1 else f"must be >= {minimum}"
        raise ValueError(f"{field}: {rule} (got {n})")
    if bits is not None and n >= 1 << bits:
        raise ValueError(f"{field}: must fit u{bits} (got {n})")
    return n


def check_shape(field: str, shape: Any) -> Tuple[int, ...]:
    """A non-empty sequence of ints, each > 0."""
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, np.ndarray)):
        raise TypeError(f"{field}: expected a sequence of ints (got {got(shape)})")
    out = tuple(check_int(f"{field}[{i}]", n, 1) for i, n in enumerate(shape))
    if not out:
        raise ValueError(f"{field}: must have at least one dimension (got ())")
    return out


def with_article(name: str) -> str:
    """'a Tensor', 'an AccessMode'."""
    return f"an {name}" if name[:1] in "AEIOUaeiou" and name else f"a {name}"


def check_type(field: str, value: Any, cls: Type[T]) -> T:
    """`value` when it is a `cls`; TypeError naming the field otherwise."""
    if not isinstance(value, cls):
        raise TypeError(f"{field}: expected {with_article(cls.__name__)} (got {got(value)})")
    return value


def check_bool(field: str, value: Any) -> bool:
    """`value` when it is a bool (a NumPy bool too); TypeError otherwise (1 is not a bool)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{field}: expected a bool (got {got(value)})")
    return bool(value)
