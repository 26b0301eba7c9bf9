"""docs/user-guide.md is the one path through the API: every name `simpler`
exports and every public member of the classes users hold appears in it."""

import re
from pathlib import Path

import simpler

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "user-guide.md").read_text()

# The classes a user holds, whose public members the guide must name (as `.member`).
HELD = [
    simpler.Worker,
    simpler.Orchestrator,
    simpler.Buffer,
    simpler.SharedTensor,
    simpler.DeviceBuffer,
    simpler.Domain,
    simpler.GlobalDomain,
    simpler.WindowBuffer,
    simpler.MappedArgs,
    simpler.Progress,
]


def named(word: str) -> bool:
    """`word` appears as a whole name ('.line' also inside 'p.line()')."""
    before = "" if word.startswith(".") else r"(?<![\w])"
    return re.search(before + re.escape(word) + r"(?![\w])", GUIDE) is not None


def test_every_exported_name_is_in_the_guide():
    missing = [n for n in simpler.__all__ if not named(n)]
    assert not missing, f"docs/user-guide.md does not name {missing}"


def test_every_public_member_of_a_held_class_is_in_the_guide():
    missing = [
        f"{cls.__name__}.{m}"
        for cls in HELD
        for m in dir(cls)
        if not m.startswith("_") and not named(f".{m}") and not named(f"{cls.__name__}.{m}")
    ]
    assert not missing, f"docs/user-guide.md does not name {missing}"
