"""Domain and WindowBuffer: a communication domain of chips that share
symmetric memory — what `orch.allocate_domain(name, workers, window_size,
buffers)` returns.

Each member chip gets a window of `window_size` bytes at the same offset of its
window heap (the Worker option `window_heap_bytes`); the named buffers are laid
out in every window in order, each on 64 bytes. Window heaps are shared
between the chip processes, so a kernel on one member reads and writes any
member's window: `dom.context(chip)` is the list of scalars a kernel needs for
that ([rank, size, window base of rank 0, ..., of rank size-1]).

`dom.buffer(name, chip)` is a WindowBuffer: a VMM_WINDOW backing (address space
DEVICE, an 8-byte body holding the address) with its own identity, owned by that
chip. A tensor over it may be named by a task on any chip of the domain (peers
read and write each other's windows); a host sub-worker or a chip outside the
domain is refused at submit. Tasks naming the same window buffer are ordered by
the usual dependency inference.

Leaving the `with` block (or `release()`) refuses the domain's buffers at submit
at once and frees the windows once every task submitted before has finished; a
domain not released when its run ends is released then.

GlobalDomain is the same across chips of different level-3 children of one
level-4 Worker (what `orch.allocate_global_domain(name, members=[(l3, chip),
...], window_size, buffers)` returns). The L4 maps one window heap per member
slot — one per (local L3 child, chip), `window_heap_bytes` each, MAP_NORESERVE
— before it forks its L3 children; each L3 and its chips inherit them, so the
chips of different L3 children read and write the same bytes. A task the L4
sends to L3 child `l3` may carry any window buffer of a domain with a member on
`l3`; the L3 admits a global window tensor only on a member chip (peers'
windows included); a sub-worker, a non-member chip and a released domain are
refused at submit. The collectives over it (simpler.collectives) run each
phase as one chip task on the L3 child of its rank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from simpler._core import BufferDescriptor, CanonicalIdentity, DataType, EngineWorker, Tensor, element_size
from simpler.model.arg_checks import check_int
from simpler.model.device_buffer import DeviceBackedHandle

if TYPE_CHECKING:
    from types import TracebackType


class WindowBuffer(DeviceBackedHandle):
    """One named buffer in one member's window (VMM_WINDOW, owned by `chip`)."""

    def __init__(self, domain: "Domain", name: str, chip: Any, descriptor: BufferDescriptor, offset: int) -> None:
        self.domain = domain
        self.name = name
        self.chip = chip  # a global domain's: the member (l3, chip)
        self.descriptor = descriptor
        self.offset = offset  # bytes from the start of the window

    @property
    def released(self) -> bool:
        """Whether its domain was released: a submit naming it is refused from then on."""
        return self.domain.released

    def tensor(
        self,
        shapes: Optional[Sequence[int]] = None,
        dtype: Optional[DataType] = None,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> Tensor:
        """A view over the buffer; by default all of it as UINT8 bytes."""
        if shapes is None:
            shapes = (self.nbytes,) if dtype is None else (self.nbytes // element_size(dtype),)
        return Tensor(self.descriptor, shapes, DataType.UINT8 if dtype is None else dtype, strides, byte_offset)

    def __repr__(self) -> str:
        state = "released" if self.released else "live"
        return (
            f"WindowBuffer({self.name!r} of {self.domain._member_text(self.chip)} in domain {self.domain.name!r}, "
            f"{self.nbytes} B, "
            f"base=0x{self.base:x}, {state})"
        )


class Domain:
    """A live communication domain; a context manager that releases it on exit."""

    def __init__(
        self,
        core: EngineWorker,
        name: str,
        workers: Sequence[Any],
        window_size: int,
        names: Sequence[str],
        carved: dict,
    ) -> None:
        self._core = core
        self._id: int = carved["id"]
        self.name = name
        self.workers: Tuple[Any, ...] = tuple(workers)  # chips; a GlobalDomain's: (l3, chip) members
        self.window_size = window_size
        self._bases: List[int] = list(carved["bases"])
        self._released = False
        self.buffers: Dict[Any, Dict[str, WindowBuffer]] = {}
        for rank, chip in enumerate(self.workers):
            self.buffers[chip] = {
                n: WindowBuffer(self, n, chip, d, off)
                for n, d, off in zip(names, carved["buffers"][rank], carved["offsets"], strict=True)
            }

    @property
    def size(self) -> int:
        """How many members (ranks) the domain has."""
        return len(self.workers)

    @property
    def released(self) -> bool:
        """Whether release() ran (or the `with` block ended): its buffers are refused at submit, and
        the windows are freed once the tasks submitted before have finished."""
        return self._released

    def _member_text(self, chip: Any) -> str:
        """How messages name a member."""
        return f"chip {chip}"

    def _release_in_core(self) -> None:
        self._core.release_domain(self._id)

    def rank(self, chip: int) -> int:
        """The dense rank of member `chip` (its position in workers)."""
        chip = check_int("Domain.rank.chip", chip, bits=32)
        try:
            return self.workers.index(chip)
        except ValueError:
            raise ValueError(
                f"domain {self.name!r}: chip {chip} is not a member (chips {', '.join(map(str, self.workers))})"
            ) from None

    def window_base(self, chip: int) -> int:
        """The device address of member `chip`'s window."""
        return self._bases[self.rank(chip)]

    def buffer(self, name: str, chip: int) -> WindowBuffer:
        """Buffer `name` in member `chip`'s window."""
        mine = self.buffers[self.workers[self.rank(chip)]]
        if name not in mine:
            names = ", ".join(map(repr, mine)) or "none"
            raise KeyError(f"domain {self.name!r}: no buffer {name!r} (buffers: {names})")
        return mine[name]

    def context(self, chip: int) -> List[int]:
        """What a kernel on member `chip` needs to reach every window, as
        scalars: [rank, size, window base of rank 0, ..., of rank size-1]."""
        return [self.rank(chip), self.size, *self._bases]

    def release(self) -> None:
        """Refused at submit from now on; the windows are freed once every task
        submitted before this call has finished. Idempotent."""
        if self._released:
            return
        self._released = True
        if not self._core.closed:
            self._release_in_core()

    def _why_released(self, identity: CanonicalIdentity) -> Optional[str]:
        """Why `identity` is refused when it is a buffer of this domain and the domain was released."""
        if not self._released:
            return None
        for chip, mine in self.buffers.items():
            for b in mine.values():
                if b.identity == identity:
                    return (
                        f"window buffer {b.name!r} of {self._member_text(chip)} in domain {self.name!r} was "
                        "released (the "
                        "domain's block ended or release() was called); a task may not name it any more"
                    )
        return None

    def __enter__(self) -> "Domain":
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: "Optional[TracebackType]") -> None:
        self.release()

    def __repr__(self) -> str:
        state = "released" if self._released else "live"
        return (
            f"Domain({self.name!r}, chips {self.workers}, window_size={self.window_size}, "
            f"buffers={list(next(iter(self.buffers.values())).keys()) if self.buffers else []}, {state})"
        )


Member = Tuple[int, int]


class GlobalDomain(Domain):
    """A live global domain; members are (l3, chip) pairs in rank order."""

    def __init__(
        self,
        core: EngineWorker,
        name: str,
        members: Sequence[Member],
        window_size: int,
        names: Sequence[str],
        carved: dict,
        child_level: int,
    ) -> None:
        self._child_level = child_level
        super().__init__(core, name, members, window_size, names, carved)

    @property
    def members(self) -> Tuple[Member, ...]:
        """The (l3, chip) pairs in rank order (the same as `workers`)."""
        return self.workers

    def _member_text(self, chip: Any) -> str:
        l3, c = chip
        return f"L{self._child_level}[{l3}] chip {c}"

    def _release_in_core(self) -> None:
        self._core.release_global_domain(self._id)

    def rank(self, chip: Any) -> int:
        """The dense rank of member `chip`, an (l3, chip) pair."""
        if not (isinstance(chip, tuple) and len(chip) == 2):
            raise TypeError(f"domain {self.name!r}: a member is an (l3, chip) pair (got {chip!r})")
        try:
            return self.workers.index(chip)
        except ValueError:
            members = ", ".join(self._member_text(m) for m in self.workers)
            raise ValueError(f"domain {self.name!r}: {self._member_text(chip)} is not a member ({members})") from None

    def __repr__(self) -> str:
        state = "released" if self.released else "live"
        names = list(next(iter(self.buffers.values())).keys()) if self.buffers else []
        return (
            f"GlobalDomain({self.name!r}, members {list(self.workers)}, window_size={self.window_size}, "
            f"buffers={names}, {state})"
        )
