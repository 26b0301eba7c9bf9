"""What a range of this process's memory is, read from /proc/self/maps.

`Worker.share` names memory the runtime did not allocate, and what it may name
it as depends on how that memory is mapped: a MAP_SHARED range (torch's
`share_memory_()`, `multiprocessing.shared_memory`, `mmap.mmap(-1, n)`) is
inherited by a forked child at the same address and shared with it; a private
one (a plain NumPy array or torch tensor) is copied on write; a range inside a
named POSIX shm object can be mapped by name in any process. `describe_range`
reads the kernel's answer for a byte range rather than trusting the caller.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

__all__ = ["Mapping", "MemoryRange", "describe_range", "mappings"]

_DELETED = " (deleted)"
SHM_DIR = "/dev/shm/"


@dataclass(frozen=True)
class Mapping:
    """One line of /proc/self/maps."""

    start: int
    end: int
    perms: str  # e.g. "rw-s"
    offset: int  # file offset of `start`
    dev: Tuple[int, int]  # (major, minor)
    inode: int
    path: str  # "" for anonymous memory; a deleted file keeps its " (deleted)" suffix

    @property
    def shared(self) -> bool:
        return self.perms[3] == "s"


def mappings() -> List[Mapping]:
    """Every mapping of this process, in address order."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.rstrip("\n").split(maxsplit=5)
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            out.append(
                Mapping(
                    lo,
                    hi,
                    fields[1],
                    int(fields[2], 16),
                    (major, minor),
                    int(fields[4]),
                    fields[5] if len(fields) > 5 else "",
                )
            )
    return out


@dataclass(frozen=True)
class MemoryRange:
    """What [start, end) is: `shared` (MAP_SHARED) or private, `writable`, and
    for a shared range the object behind it: `dev`/`inode`, the file offset of
    `start` and the path (`deleted` when the object has no name any more)."""

    start: int
    end: int
    shared: bool
    writable: bool
    dev: Tuple[int, int]
    inode: int
    file_offset: int
    path: str
    deleted: bool

    @property
    def key(self) -> Tuple[object, ...]:
        """Where the bytes physically are, for telling whether two ranges share
        bytes: (dev, inode, first and end file offset) for a shared range (two
        mappings of one object at different addresses share bytes), the
        address range for a private one."""
        if self.shared:
            return ("object", self.dev, self.inode, self.file_offset, self.file_offset + self.end - self.start)
        return ("address", (0, 0), 0, self.start, self.end)

    @property
    def shm_name(self) -> Optional[str]:
        """The POSIX shm name (no leading '/') when the range lies in a named
        object under /dev/shm, else None."""
        if not self.shared or self.deleted or not self.path.startswith(SHM_DIR):
            return None
        return self.path[len(SHM_DIR) :]


def keys_overlap(a: Tuple[object, ...], b: Tuple[object, ...]) -> bool:
    """True when two MemoryRange keys name common bytes."""
    if a[:3] != b[:3]:
        return False
    a_lo, a_hi, b_lo, b_hi = a[3], a[4], b[3], b[4]
    assert isinstance(a_lo, int) and isinstance(a_hi, int) and isinstance(b_lo, int) and isinstance(b_hi, int)
    return a_lo < b_hi and b_lo < a_hi


def describe_range(start: int, nbytes: int, maps: Optional[List[Mapping]] = None) -> MemoryRange:
    """What the nbytes at `start` are. ValueError when part of the range is not
    mapped, when it mixes shared and private mappings, or when a shared range
    spans two objects (or one object at inconsistent offsets)."""
    end = start + nbytes
    covering = [m for m in (maps if maps is not None else mappings()) if m.start < end and start < m.end]
    at = start
    for m in covering:
        if m.start > at:
            break
        at = m.end
    if not covering or at < end:
        raise ValueError(f"the range 0x{start:x}..0x{end:x} is not (wholly) mapped in this process")
    shared = {m.shared for m in covering}
    if len(shared) != 1:
        raise ValueError(f"the range 0x{start:x}..0x{end:x} spans both shared and private mappings")
    first = covering[0]
    is_shared = first.shared
    if is_shared:
        for m in covering:
            if (m.dev, m.inode, m.path) != (
                first.dev,
                first.inode,
                first.path,
            ) or m.offset - m.start != first.offset - first.start:
                raise ValueError(f"the range 0x{start:x}..0x{end:x} spans more than one shared object")
    path = first.path
    deleted = path.endswith(_DELETED)
    if deleted:
        path = path[: -len(_DELETED)]
    elif is_shared and path:
        # A name that now belongs to another object (unlinked and made again) is no name for these bytes.
        try:
            st = os.stat(path)
            deleted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) != (*first.dev, first.inode)
        except OSError:
            deleted = True
    return MemoryRange(
        start=start,
        end=end,
        shared=is_shared,
        writable=all(m.perms[:2] == "rw" for m in covering),
        dev=first.dev,
        inode=first.inode,
        file_offset=first.offset + (start - first.start) if is_shared else 0,
        path=path,
        deleted=deleted,
    )
