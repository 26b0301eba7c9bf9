"""A Worker's options as the WorkerConfig it runs with.

Every option lands in a WorkerConfig (the C++ struct, bound): a keyword left
None keeps the struct's default, and the struct validates (FieldRefused, a
ValueError carrying the field and the rule, which a renamed keyword's refusal
is worded from). A keyword sets the WorkerConfig field of its name, or the field
_RENAMED names.
"""

from __future__ import annotations

import operator
import os
from typing import Any, Callable, Dict, Optional, Tuple

from simpler._core import DeviceKind, FieldRefused, StagingMode, WorkerConfig
from simpler.model.arg_checks import check_bool, check_int, got

# The highest level a Worker takes: a tree of host (3), pod (4) and up to four levels of pods above.
MAX_LEVEL = 8

# The devices a chip may drive, by the name the `device` keyword takes.
_DEVICE_KINDS = {"simulated": DeviceKind.SIMULATED, "opencl": DeviceKind.OPENCL, "cuda": DeviceKind.CUDA}

# Worker keywords named otherwise than their WorkerConfig field: the field's
# dotted path and how the keyword's value becomes the field's.
_RENAMED: dict[str, Tuple[str, Callable[[Any], Any]]] = {
    "chip_core_threads": ("chip_lane.chip.runtime.core_threads", operator.index),
    "chip_arena_bytes": ("chip_lane.chip.arena_bytes", operator.index),
    "zero_copy": ("chip_lane.chip.staging", lambda z: StagingMode.ZERO_COPY if z else StagingMode.STAGE),
    "device": ("chip_lane.chip.device.kind", lambda d: _DEVICE_KINDS[d]),
    "device_platform": ("chip_lane.chip.device.platform", str),
}


# The keywords whose value is not of the type the field holds: a bool for
# zero_copy, seconds (int or float) for spin and task_timeout (None: default),
# a device's name for device.
_BOOL_KEYWORDS = {"zero_copy"}
_SECONDS_KEYWORDS = {"spin", "task_timeout"}
_TEXT_KEYWORDS = {"device", "device_platform"}


def _checked_option(name: str, path: str, value: Any, current: Any) -> Any:
    """`value` for keyword `name` (field `path`) when its type is the field's:
    TypeError naming both otherwise (a bool is not an int, 1 is not a bool, a
    float is not a count)."""
    field = f"WorkerConfig.{path}"
    try:
        if name in _BOOL_KEYWORDS or (name not in _SECONDS_KEYWORDS and isinstance(current, bool)):
            return check_bool(field, value)
        if name in _TEXT_KEYWORDS:
            if not isinstance(value, str):
                raise TypeError(f"Worker.{name}: expected str (got {got(value)})")
            if name == "device" and value not in _DEVICE_KINDS:
                raise ValueError(f"Worker.device: {value!r} is not one of {', '.join(map(repr, _DEVICE_KINDS))}")
            return value
        if name in _SECONDS_KEYWORDS:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{field}: expected a number of seconds (got {got(value)})")
            return value
        if isinstance(current, int):
            return check_int(field, value, minimum=None)
    except TypeError as e:
        raise TypeError(f"{e} ({name}={value!r})") from None
    return value


def _as_is(value: Any) -> Any:
    return value


def check_level(level: int, num_chips: Optional[int]) -> int:
    """`level` when a Worker of that level may have `num_chips` chips (TypeError
    for a level that is no int, ValueError naming what a level is otherwise)."""
    level = check_int("Worker.level", level, minimum=None)
    if not 3 <= level <= MAX_LEVEL:
        raise ValueError(
            f"Worker(level={level}): a Worker is level 3 (a host) to {MAX_LEVEL}; level 2 is a chip, "
            "level 4 a pod of hosts, and each level above drives Workers of the one below"
        )
    if level > 3 and num_chips:
        raise ValueError(
            f"Worker(level={level}, num_chips={num_chips}): the next level of a level-{level} Worker "
            f"is level-{level - 1} Workers (add_worker), not chips; chips belong to level-3 Workers"
        )
    return level


def worker_config(**options: Any) -> WorkerConfig:
    """A validated WorkerConfig with each option that is not None set (ValueError
    naming the field for a value its field refuses or cannot hold)."""
    config = WorkerConfig()
    for name, value in options.items():
        if value is None:
            continue
        path, convert = _RENAMED.get(name, (name, _as_is))
        *parents, field = path.split(".")
        target = config
        for p in parents:
            target = getattr(target, p)
        if not hasattr(target, field):
            raise TypeError(f"Worker: no option {name!r}")
        value = _checked_option(name, path, value, getattr(target, field))
        try:
            setattr(target, field, convert(value))
        except FieldRefused as e:
            # The binding's refusal of an int its field cannot hold names the struct's field, not the option.
            if e.field == f"{type(target).__name__}.{field}":
                raise ValueError(f"WorkerConfig.{path}: {value} does not fit the field ({name}={value})") from None
            raise
    try:
        config.validate()
    except FieldRefused as e:
        raise ValueError(_as_option(e, options)) from None
    return config


def _as_option(refusal: FieldRefused, options: Dict[str, Any]) -> str:
    """A WorkerConfig refusal worded to name the keyword the user passed, when
    the refused field is one a keyword of another name set ("Worker.chip_arena_bytes:
    must be > 0 (got 0) (WorkerConfig.chip_lane.chip.arena_bytes)")."""
    for name, (path, _convert) in _RENAMED.items():
        if options.get(name) is not None and refusal.field == f"WorkerConfig.{path}":
            return f"Worker.{name}: {refusal.rule} ({refusal.field})"
    return str(refusal)


def default_device(device: Optional[str]) -> Optional[str]:
    """`device`, or when it is None the default SIMPLER_DEVICE sets (ValueError
    for a name that is not a device's), so a program runs with the device switched."""
    if device is None and os.environ.get("SIMPLER_DEVICE"):
        device = os.environ["SIMPLER_DEVICE"]
        if device not in _DEVICE_KINDS:
            raise ValueError(
                f"SIMPLER_DEVICE={device!r} (the default of Worker.device) is not one of "
                f"{', '.join(map(repr, _DEVICE_KINDS))}"
            )
    return device
