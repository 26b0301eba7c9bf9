"""DeviceBuffer: DEVICE_MALLOC memory on one chip — what
`orch.alloc_child_tensor(worker, shape, dtype)` returns.

Its bytes live only in that chip's process: `.base` is the device pointer
(meaningful there only), a tensor over it may be dispatched only to that chip
(refused at submit otherwise, and again by the chip's import registry), and the
host reaches the bytes through `orch.copy_to` / `orch.copy_from`. It is freed
when its scope ends (`orch.scope()`, or the run for an allocation outside any
scope) — once every task submitted before that has finished — or by `release()`;
a task that names it afterwards is refused at submit.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from simpler._core import BufferDescriptor, CanonicalIdentity, DataType, EngineWorker, Tensor


class DeviceBackedHandle:
    """What every handle on device memory of one chip shares: its descriptor
    (DEVICE_MALLOC or VMM_WINDOW, address-bearing) and the chip that owns it."""

    descriptor: BufferDescriptor
    chip: int

    @property
    def identity(self) -> CanonicalIdentity:
        """The memory's canonical identity (minted by the Worker that allocated it)."""
        return self.descriptor.identity

    @property
    def nbytes(self) -> int:
        """The allocation's size in bytes."""
        return self.descriptor.nbytes

    @property
    def base(self) -> int:
        """The device address of byte 0 (meaningful in chip processes only)."""
        address = self.descriptor.address
        assert address is not None, "a DEVICE backing's descriptor always bears an address"
        return address


class DeviceBuffer(DeviceBackedHandle):
    """Device memory on one chip (DEVICE_MALLOC), what Orchestrator.alloc_child_tensor returns: its
    bytes exist only in chip `chip`'s process, a tensor over it may go only to that chip, and the
    host moves bytes with Orchestrator.copy_to / copy_from. It is released when its scope or run
    ends (or by release() for one allocated with scoped=False), and freed once every task
    submitted before then has finished."""

    def __init__(
        self, core: EngineWorker, descriptor: BufferDescriptor, chip: int, shape: Tuple[int, ...], dtype: DataType
    ) -> None:
        self._core = core
        self.descriptor = descriptor
        self.chip = chip
        self.shape = tuple(shape)
        self.dtype = dtype
        self._released = False

    @property
    def released(self) -> bool:
        """Whether it was released: a submit naming it is refused from then on."""
        return self._released

    def tensor(
        self,
        shapes: Optional[Sequence[int]] = None,
        dtype: Optional[DataType] = None,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> Tensor:
        """A view over the device memory; by default the whole (shape, dtype) it was allocated with."""
        return Tensor(
            self.descriptor,
            self.shape if shapes is None else shapes,
            self.dtype if dtype is None else dtype,
            strides,
            byte_offset,
        )

    def release(self) -> None:
        """Refused at submit from now on; freed once every task submitted before
        this call has finished. Idempotent."""
        if self._released:
            return
        self._released = True
        if not self._core.closed:
            self._core.release_device(self.identity)

    def __repr__(self) -> str:
        state = "released" if self._released else "live"
        return f"DeviceBuffer(chip {self.chip}, {self.shape}, {self.dtype.name}, base=0x{self.base:x}, {state})"
