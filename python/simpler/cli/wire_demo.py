"""`python -m simpler wire`: the memory model's wire types end to end, without running anything.

Builds docs/explanation/memory-model.md's example views over one buffer descriptor, submits-to-be
arguments into a TaskArgs, writes the argument blob and reads it back (the only
bytes-to-Tensor path, validating every element), then shows what the gates
refuse and why.
"""

from __future__ import annotations

import os
import struct
from typing import Callable

from simpler.model.buffer import AccessMode, BackendKind, BufferDescriptor, CanonicalIdentity, DataType, Tensor
from simpler.model.task_interface import TaskArgs, TensorArgType, read_blob, write_blob


def _refusal(action: Callable[[], object]) -> str:
    try:
        action()
    except ValueError as e:
        return str(e)
    raise AssertionError("expected a refusal")


def run(out: Callable[[str], None] = print) -> int:
    M, N, K = 8, 16, 4
    owner = os.urandom(8)
    a = BufferDescriptor(
        CanonicalIdentity(owner, 1, 1),
        BackendKind.POSIX_SHM,
        AccessMode.READWRITE,
        M * N * 4,
        f"sp{owner.hex()}-1g1".encode(),
    )
    out(f"buffer      {a!r}")

    views = {
        "contiguous": Tensor(a, (M, N), DataType.FLOAT32),
        "transposed": Tensor(a, (N, M), DataType.FLOAT32, strides=(1, N)),
        "sub-region": Tensor(a, (M // 2, K), DataType.FLOAT32, strides=(N, 1), byte_offset=4 * (2 * N + 4)),
    }
    for name, v in views.items():
        out(
            f"view        {name:<11} shapes={v.shapes} strides={v.strides} byte_offset={v.byte_offset} "
            f"extent={v.extent_bytes} B"
        )

    args = TaskArgs()
    args.add_tensor(views["contiguous"], TensorArgType.INPUT)
    args.add_tensor(views["sub-region"], TensorArgType.OUTPUT_EXISTING)
    args.add_scalar(42)
    blob = write_blob(args)
    back = read_blob(blob)
    assert back.tensors == [args[0], args[1]] and back.scalars == [42]
    out(
        f"blob        {len(blob)} bytes = 8 + 144*{len(args)} + 8*{args.scalar_count}; "
        f"read back {len(back.tensors)} tensors, scalars {back.scalars}: equal"
    )

    cow = BufferDescriptor.for_address(
        CanonicalIdentity(owner, 2, 1), BackendKind.FORK_COW, AccessMode.READ, 64, 0x7F0000000000
    )
    refusals: dict[str, Callable[[], object]] = {
        "copy-on-write granting WRITE": lambda: BufferDescriptor.for_address(
            CanonicalIdentity(owner, 3, 1), BackendKind.FORK_COW, AccessMode.WRITE, 64, 0x7F0000000000
        ),
        "COW tensor named as output": lambda: TaskArgs().add_tensor(
            Tensor(cow, (16,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING
        ),
        "view past the backing": lambda: Tensor(a, (M + 1, N), DataType.FLOAT32),
        "misaligned byte_offset": lambda: Tensor(a, (4,), DataType.FLOAT32, byte_offset=2),
        "shm name with '/'": lambda: BufferDescriptor(
            CanonicalIdentity(owner, 4, 1), BackendKind.POSIX_SHM, AccessMode.READ, 64, b"bad/name"
        ),
    }
    corrupt = bytearray(blob)
    struct.pack_into("<B", corrupt, 8 + 144 + 56 + 31, 0xEE)  # a stray byte past tensor[1]'s body_len
    refusals["stray byte in a received blob"] = lambda: read_blob(bytes(corrupt))
    truncated = blob[:-9]
    refusals["truncated blob"] = lambda: read_blob(truncated)
    for what, action in refusals.items():
        out(f"refused     {what}: {_refusal(action)}")
    return 0
