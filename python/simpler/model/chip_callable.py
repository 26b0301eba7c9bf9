"""ChipCallable: a chip orchestration (and the kernels it submits) that a
Worker's chips run — what `Worker.register` takes for `submit_next_level`.

    ChipCallable("std.vector_add")                          # the standard set, built in
    ChipCallable.from_source("my_kernels.cpp", "my.orch")   # built by the project, cached by content hash
    ChipCallable.from_library("/path/libmine.so", "my.orch") # a prebuilt library
    ChipCallable.from_opencl("saxpy.cl", "saxpy")           # one OpenCL C kernel (OpenCL chips)

Chip orchestrations and kernels are C++ written against
`simpler/chip/orchestration_api.h` and `simpler/chip/kernel_api.h` (docs/internals/chip.md).
An OpenCL C kernel is a callable of its own: a task runs it once on the task's
arguments, one work item per element of the last tensor (docs/internals/chip.md,
"Writing an OpenCL kernel").
The standard set: std.vector_add, std.mul, std.add_scalar, std.copy,
std.matmul, std.sum_n and std.noop. A name is checked when the callable is registered
(in the parent, before any chip exists); every chip child loads the library
after it is forked.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from simpler._core import (
    build_chip_library,
    chip_cache_dir,
    chip_orchestration_names,
    opencl_kernel_names,
    read_private_file,
    write_private_file,
)
from simpler.model.arg_checks import check_type


@dataclass(frozen=True)
class ChipCallable:
    """A chip orchestration, by name: `ChipCallable("std.matmul")` names one of the standard set;
    from_source, from_library and from_opencl name one of your own. Register it on a Worker to get
    the handle a task names it by. ValueError for an empty name or a library path with no file."""

    orchestration: str
    library: Optional[str] = None  # a shared library's path; None: the standard set

    def __post_init__(self) -> None:
        check_type("ChipCallable.orchestration", self.orchestration, str)
        if not self.orchestration:
            raise ValueError("ChipCallable.orchestration: must be a non-empty name (got '')")
        if self.library is not None:
            check_type("ChipCallable.library", self.library, str)
        if self.library is not None and not os.path.isfile(self.library):
            raise ValueError(f"ChipCallable: no chip library at {self.library!r}")

    @classmethod
    def from_source(
        cls, source_path: str, orchestration: str, flags: Optional[Sequence[str]] = None, cache_dir: str = ""
    ) -> "ChipCallable":
        """Builds `source_path` (one C++ file) into a chip library with the
        system compiler — a cache hit when nothing it depends on changed — and
        names `orchestration` in it. RuntimeError carries the compiler's output."""
        path, _key, _hit = build_chip_library(
            os.fspath(source_path), None if flags is None else list(flags), "", cache_dir
        )
        return cls(orchestration, path)

    @classmethod
    def from_library(cls, path: str, orchestration: str) -> "ChipCallable":
        """`orchestration` of the prebuilt chip library at `path` (built against get_include())."""
        return cls(orchestration, os.fspath(path))

    @classmethod
    def from_opencl(cls, source: Union[str, "os.PathLike[str]"], kernel: str) -> "ChipCallable":
        """OpenCL C kernel `kernel` of `source` — the path of a `.cl` file, or
        the source text itself (kept in the chip cache under its content hash)
        — as a callable named "opencl:<kernel>": a task runs the kernel once on
        its arguments (each tensor as its buffer and a simpler_view, then each
        scalar as a ulong), one work item per element of its last tensor. It
        runs on OpenCL chips (Worker(device="opencl")), built in each chip when
        registered. ValueError when the source defines no such kernel."""
        check_type("ChipCallable.from_opencl.kernel", kernel, str)
        if isinstance(source, os.PathLike) or (
            isinstance(source, str) and source.endswith(".cl") and "\n" not in source
        ):
            path = os.fspath(source)
            if not os.path.isfile(path):
                raise ValueError(f"ChipCallable.from_opencl: no OpenCL source at {path!r}")
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            where = repr(path)
        else:
            check_type("ChipCallable.from_opencl.source", source, str)
            text, where = source, "the source"
            data = text.encode()
            # In the private cache (chip_cache_dir): a file there is used only when this user alone wrote it.
            path = os.path.join(chip_cache_dir("opencl-src"), hashlib.sha256(data).hexdigest() + ".cl")
            if read_private_file(path) != data:
                write_private_file(path, data)
        names = opencl_kernel_names(text)
        if kernel not in names:
            raise ValueError(
                f"ChipCallable.from_opencl: {where} defines no __kernel {kernel!r} "
                f"(it defines: {', '.join(names) if names else 'none'})"
            )
        return cls(f"opencl:{kernel}", path)


def check_orchestrations(callables: Sequence[ChipCallable]) -> list:
    """The libraries the chips load (in first-use order, each once); raises
    ValueError naming any orchestration they do not offer."""
    libraries: list = []
    for c in callables:
        if c.library is not None and c.library not in libraries:
            libraries.append(c.library)
    offered = set(chip_orchestration_names(libraries))
    for c in callables:
        if c.orchestration not in offered:
            where = f"library {c.library!r}" if c.library else "the standard set"
            raise ValueError(
                f"ChipCallable: no chip orchestration named {c.orchestration!r} in {where} "
                f"(offered: {', '.join(sorted(offered))})"
            )
    return libraries
