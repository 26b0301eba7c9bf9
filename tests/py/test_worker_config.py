"""Worker options live in one C++ struct, WorkerConfig: every default is the
struct's initializer (Python's keywords default to None, meaning "the struct's
default", and worker.py holds no default number), every rule is the struct's
validate() (ValueError naming the field), and each keyword lands in its
field."""

import inspect
import math
import re
from pathlib import Path

import pytest

from simpler import Worker
from simpler._core import ChipServiceConfig, FieldRefused, RuntimeConfig, StagingMode, WorkerConfig

WORKER_PY = Path(__file__).resolve().parents[2] / "python" / "simpler" / "worker.py"


def test_every_option_keyword_defaults_to_none():
    params = inspect.signature(Worker).parameters
    options = [p for name, p in params.items() if name != "level"]
    assert options, "Worker takes options"
    for p in options:
        assert p.default is None, f"Worker({p.name}=...) defaults to {p.default!r}, not None (the struct's default)"


def test_a_worker_built_without_options_has_the_structs_defaults():
    assert Worker().config == WorkerConfig()
    assert Worker(level=3, num_chips=0).config == WorkerConfig()


def test_worker_py_repeats_no_default_number():
    source = WORKER_PY.read_text()
    for number in (
        "1 << 30",
        "1 << 20",
        "1_000_000",
        "1000000",
        "268435456",
        "chip_core_threads: int = 2",
        "= 2,",
        "256 << 20",
    ):
        assert number not in source, f"worker.py repeats a default: {number!r}"
    # The option keywords: Worker.__init__'s signature (a method's own flag, like release_buffer's
    # wait=False, is no WorkerConfig field).
    signature = source[source.index("    def __init__(") :]
    signature = signature[: signature.index("):")]
    literal_defaults = re.findall(r"(\w+):\s*(?:int|float|bool)\s*=\s*(?:\d|True|False)", signature)
    assert literal_defaults == ["level"], "only level (no WorkerConfig field) has a literal default"


def test_each_keyword_lands_in_its_field():
    w = Worker(
        num_chips=2,
        num_sub_workers=1,
        task_timeout=0.25,
        blob_capacity=4096,
        chip_core_threads=3,
        chip_arena_bytes=1 << 22,
        device_memory_bytes=1 << 21,
        zero_copy=True,
        record_edges=True,
        trace=True,
        trace_capacity=10,
        spin=0,
    )
    c = w.config
    assert (c.num_chips, c.num_sub_workers, c.blob_capacity) == (2, 1, 4096)
    assert c.task_timeout == 0.25
    assert c.chip_lane.chip.runtime.core_threads == 3
    assert c.chip_lane.chip.arena_bytes == 1 << 22
    assert c.chip_lane.chip.staging == StagingMode.ZERO_COPY
    assert (c.device_memory_bytes, c.record_edges, c.trace, c.trace_capacity) == (1 << 21, True, True, 10)
    assert c.spin == 0.0
    assert c != WorkerConfig()


def test_nested_fields_are_written_in_place():
    c = WorkerConfig()
    c.chip_lane.chip.runtime.core_threads = 7
    assert c.chip_lane.chip.runtime.core_threads == 7
    assert c != WorkerConfig()
    assert ChipServiceConfig().runtime == RuntimeConfig()


@pytest.mark.parametrize("spin", [None, 0.0, 1e-4, 1.0])
def test_spin_reads_back_in_seconds(spin):
    c = WorkerConfig()
    c.spin = spin
    assert c.spin == spin
    c.validate()


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(spin=1.5), "WorkerConfig.spin"),
        (dict(spin=math.nan), "WorkerConfig.spin"),
        (dict(task_timeout=-1), "WorkerConfig.task_timeout"),
        (dict(task_timeout=0), "WorkerConfig.task_timeout: must be > 0 seconds"),
        (dict(task_timeout=math.nan), "WorkerConfig.task_timeout"),
        (dict(task_timeout=math.inf), "WorkerConfig.task_timeout"),
        (dict(chip_core_threads=0), "Worker.chip_core_threads: must be in [1, 256] (got 0)"),
        (dict(chip_arena_bytes=0), "Worker.chip_arena_bytes: must be > 0"),
        (dict(num_chips=-1), "WorkerConfig.num_chips"),
        (dict(trace_capacity=-1), "WorkerConfig.trace_capacity"),
    ],
)
def test_a_bad_option_is_a_value_error_naming_its_field(kwargs, field):
    with pytest.raises(ValueError, match=re.escape(field)):
        Worker(**kwargs)


def test_a_refusal_carries_the_field_and_the_rule_as_values():
    """validate() raises FieldRefused (a ValueError): .field is the dotted path from WorkerConfig,
    .rule what it broke; a renamed keyword's message is worded from the two, not from the text."""
    c = WorkerConfig()
    c.chip_lane.chip.arena_bytes = 0
    with pytest.raises(FieldRefused) as info:
        c.validate()
    assert (info.value.field, info.value.rule) == ("WorkerConfig.chip_lane.chip.arena_bytes", "must be > 0 (got 0)")
    assert str(info.value) == "WorkerConfig.chip_lane.chip.arena_bytes: must be > 0 (got 0)"
    with pytest.raises(ValueError) as renamed:
        Worker(chip_arena_bytes=0)
    assert (
        str(renamed.value) == "Worker.chip_arena_bytes: must be > 0 (got 0) (WorkerConfig.chip_lane.chip.arena_bytes)"
    )
    with pytest.raises(FieldRefused) as out_of_range:
        RuntimeConfig().core_threads = -1  # a value its C++ field cannot hold
    assert out_of_range.value.field == "RuntimeConfig.core_threads"
    assert out_of_range.value.rule == "out of range for this field (got -1)"


def test_a_task_timeout_too_short_to_honour_is_refused_and_others_round_up():
    # 1e-4 was accepted and held to 1 ms: a task of 0.5 ms ran to completion past its timeout.
    c = WorkerConfig()
    for s in (1e-4, 1e-6, 0.00099):
        with pytest.raises(ValueError, match=r"task_timeout: must be at least 0\.001 seconds"):
            c.task_timeout = s
        with pytest.raises(ValueError, match=r"task_timeout: must be at least 0\.001 seconds"):
            Worker(task_timeout=s)
    assert c.task_timeout is None  # unchanged by the refusals
    c.task_timeout = 0.001
    assert c.task_timeout == 0.001
    c.task_timeout = 0.0015
    assert c.task_timeout == 0.002
    c.task_timeout = None
    assert c.task_timeout is None
