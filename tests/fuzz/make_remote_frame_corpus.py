"""Writes the seed corpus of fuzz_remote_frame (tests/fuzz/corpus/remote_frame/).

One valid frame of each type, laid out as src/simpler/remote/remote_frame.h
says, plus a TASK of several views (column block, transposed, rank 5, with
FETCH and WRITE_BACK flags) and a TASK with only scalars. Run from the
repository root: python tests/fuzz/make_remote_frame_corpus.py
"""

from __future__ import annotations

import struct
from pathlib import Path

OUT = Path(__file__).resolve().parent / "corpus" / "remote_frame"

MAGIC = 0x46524D53
VERSION = 1
HELLO, READY, TASK, DONE, FORGET, SHUTDOWN, BYE = range(1, 8)
FETCH, WRITE_BACK = 1, 2
REMOTE_SIDECAR = 3
FLOAT32, FLOAT16, INT64 = 0, 1, 7
READ, WRITE, READWRITE = 0, 1, 2
MAX_DIMS = 5


def header(frame_type: int, seq: int, word: int, body_len: int, count: int) -> bytes:
    return struct.pack("<IHHQQII", MAGIC, VERSION, frame_type, seq, word, body_len, count)


def frame(frame_type: int, body: bytes, seq: int = 0, word: int = 0, count: int = 0) -> bytes:
    return header(frame_type, seq, word, len(body), count) + body


def identity(buffer_id: int, generation: int = 1) -> bytes:
    return bytes(range(0xA0, 0xA8)) + struct.pack("<QI", buffer_id, generation) + bytes(12)


def sidecar(buffer_id: int, nbytes: int, access: int = READWRITE, path_id: int = 0) -> bytes:
    # magic, address space (HOST), access, backend, pad, identity, nbytes, owner path, body_len, pad, body
    return (
        struct.pack("<HBBB3x", 0x5342, 0, access, REMOTE_SIDECAR)
        + identity(buffer_id)
        + struct.pack("<QIH2x", nbytes, path_id, 0)
        + bytes(32)
    )


def tensor(desc: bytes, shapes: list[int], strides: list[int], dtype: int, byte_offset: int = 0) -> bytes:
    pad = [0] * (MAX_DIMS - len(shapes))
    return (
        desc
        + struct.pack("<QI", byte_offset, len(shapes))
        + struct.pack("<5I", *(shapes + pad))
        + struct.pack("<5I", *(strides + pad))
        + struct.pack("<B3x", dtype)
    )


def call_config(block_dim: int, written: list[int]) -> bytes:
    mask = bytearray(32)
    for i in written:
        mask[i // 8] |= 1 << (i % 8)
    return struct.pack("<IBB26x", block_dim, 0, 0) + bytes(mask)


def task(
    seq: int, callable_id: int, written: list[int], flags: list[int], tensors: list[bytes], scalars: list[int]
) -> bytes:
    padded = (len(flags) + 7) // 8 * 8
    blob = struct.pack("<ii", len(tensors), len(scalars)) + b"".join(tensors)
    blob += b"".join(struct.pack("<Q", s) for s in scalars)
    body = call_config(4, written) + bytes(flags) + bytes(padded - len(flags)) + blob
    return frame(TASK, body, seq, callable_id, len(tensors))


def seeds() -> dict[str, bytes]:
    block = tensor(sidecar(1, 10 * 12 * 4, READ, 3), [5, 4], [12, 1], FLOAT32, (2 * 12 + 3) * 4)
    transposed = tensor(sidecar(2, 6 * 2, WRITE), [3, 2], [1, 3], FLOAT16)
    rank5 = tensor(sidecar(3, 2 * 3 * 2 * 2 * 2 * 8), [2, 3, 1, 2, 2], [24, 8, 77, 2, 1], INT64)
    whole = tensor(sidecar(4, 256), [64], [1], FLOAT32)
    return {
        "hello": frame(HELLO, b"num_chips=2 platform=sim"),
        "ready": frame(READY, b""),
        "ready_refused": frame(READY, b"no such callable: fwd"),
        "done_ok": frame(DONE, b"", seq=7, word=0, count=2),
        "done_failed": frame(DONE, b"TASK_FAILED: kernel fault", seq=8, word=1),
        "done_report": frame(DONE, (OUT.parent / "failure_report" / "raised").read_bytes(), seq=8, word=2),
        "forget": frame(FORGET, identity(1) + identity(2, 3), count=2),
        "shutdown": frame(SHUTDOWN, b""),
        "bye": frame(BYE, b""),
        "task_views": task(
            9,
            3,
            [1, 2],
            [FETCH, WRITE_BACK, FETCH | WRITE_BACK, FETCH],
            [block, transposed, rank5, whole],
            [42, 2**64 - 1],
        ),
        "task_scalars_only": task(10, 0, [], [], [], [1, 2, 3]),
        "task_one_view": task(11, 1, [0], [WRITE_BACK], [whole], []),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (OUT / name).write_bytes(data)
    print(f"wrote {len(seeds())} seeds to {OUT}")


if __name__ == "__main__":
    main()
