"""simpler.CallConfig is the C++ POD (64 bytes, docs/internals/abi.md) bound to Python:
block_dim, zero_copy and checked read and write at their ABI offsets, to_bytes() /
from_bytes() round-trip all 64 bytes, a wrong length or an out-of-range
block_dim is a ValueError naming it, and == compares the bytes."""

import struct

import pytest

import simpler
from simpler import CallConfig, _core


def test_the_public_call_config_is_the_bound_struct():
    assert simpler.CallConfig is _core.CallConfig


def test_fields_sit_at_their_abi_offsets():
    b = CallConfig(block_dim=0x108, zero_copy=True).to_bytes()
    assert len(b) == 64
    assert struct.unpack_from("<I", b, 0)[0] == 0x108
    assert b[4] == 1
    assert b[5:] == bytes(59)
    assert CallConfig().to_bytes() == bytes(64)
    b = CallConfig(checked=True).to_bytes()
    assert b[5] == 1
    assert b[:5] == bytes(5) and b[6:] == bytes(58)


def test_bytes_round_trip_and_equality():
    c = CallConfig(block_dim=7)
    c.zero_copy = True
    assert CallConfig.from_bytes(c.to_bytes()) == c
    assert CallConfig.from_bytes(c.to_bytes()).block_dim == 7
    assert CallConfig.from_bytes(c.to_bytes()).zero_copy is True
    assert c != CallConfig()
    assert repr(c) == "CallConfig(block_dim=7, zero_copy=True, checked=False)"
    c.checked = True
    assert CallConfig.from_bytes(c.to_bytes()).checked is True
    assert CallConfig.from_bytes(bytes(5) + b"\x80" + bytes(58)).checked is True  # any nonzero byte
    assert repr(c) == "CallConfig(block_dim=7, zero_copy=True, checked=True)"


@pytest.mark.parametrize("n", [0, 63, 65])
def test_from_bytes_of_a_wrong_length_names_it(n):
    with pytest.raises(ValueError, match=rf"must be 64 bytes \(got {n}\)"):
        CallConfig.from_bytes(bytes(n))


@pytest.mark.parametrize("v", [-1, 1 << 32])
def test_block_dim_outside_u32_is_refused(v):
    with pytest.raises(ValueError, match=r"CallConfig\.block_dim: must (fit u32|be >= 0) \(got "):
        CallConfig(block_dim=v)
    c = CallConfig()
    with pytest.raises(ValueError, match=r"CallConfig\.block_dim"):
        c.block_dim = v
    assert c.block_dim == 0


def test_call_config_py_holds_no_layout():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "python" / "simpler"
    assert not (root / "call_config.py").exists()
    assert not any("struct.Struct" in p.read_text() and "CallConfig" in p.read_text() for p in root.glob("*.py"))
