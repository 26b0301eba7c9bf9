"""CallConfig: the per-task call configuration that travels with a task to its
child (64 bytes on the wire, python/simpler/call_config.py owns the layout).

Fields:
- `block_dim`: how many core threads a chip orchestration may use (0: all).
- `zero_copy`: a chip runs on host arguments in place instead of staging them
  into device memory and back.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_LAYOUT = struct.Struct("<IB59x")  # u32 block_dim, u8 zero_copy, padding to 64 bytes
assert _LAYOUT.size == 64


@dataclass(frozen=True)
class CallConfig:
    block_dim: int = 0
    zero_copy: bool = False

    def __post_init__(self):
        if not 0 <= self.block_dim <= 0xFFFFFFFF:
            raise ValueError(f"CallConfig.block_dim: must fit u32 (got {self.block_dim})")

    def to_bytes(self) -> bytes:
        return _LAYOUT.pack(self.block_dim, 1 if self.zero_copy else 0)

    @classmethod
    def from_bytes(cls, data: bytes) -> "CallConfig":
        block_dim, zero_copy = _LAYOUT.unpack(data)
        return cls(block_dim=block_dim, zero_copy=bool(zero_copy))
