"""`python -m simpler demo --levels 4`: the tiled matmul of `demo`, one level up.

A level-4 Worker drives 2 level-3 Workers of 2 chips each (simulated, or with
`--device opencl` an OpenCL device each). C = A @ B is split into 4 column
tiles; the L4 orchestration sends tiles 0-1 to L3[0] and tiles 2-3 to L3[1],
forwarding views of the L4 buffers (nothing is copied or mapped on the way).
Each L3 orchestration splits its tile into two column halves, one per chip. The
answer is checked against NumPy; the demo prints the edges each level inferred
(none: every tile and half writes its own columns) and, with `--trace FILE`,
writes one timeline with every level in it.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from simpler.model.chip_callable import ChipCallable
from simpler.model.task_interface import DataType, TaskArgs, Tensor, TensorArgType
from simpler.runtime.orchestrator import Orchestrator
from simpler.worker import Worker

M, K, N = 256, 128, 512
TILES = 4  # at L4; each L3 splits its tile in two, one half per chip
F32 = DataType.FLOAT32


def columns(t: Tensor, j0: int, width: int) -> Tensor:
    """Columns [j0, j0 + width) of a row-major 2-D view (same buffer, same identity)."""
    rows, row_stride = t.shapes[0], t.strides[0]
    return Tensor(t.buffer, (rows, width), F32, (row_stride, 1), t.byte_offset + j0 * 4)


def run(out: Callable[[str], None] = print, trace: Optional[str] = None, device: str = "simulated") -> int:
    rng = np.random.default_rng(11)
    with Worker(level=4, record_edges=True, trace=trace is not None) as w4:
        for _ in range(2):
            w4.add_worker(Worker(level=3, num_chips=2, device=device))
        matmul = w4.register(ChipCallable("std.matmul"))

        def tile_on_two_chips(o: Orchestrator, args: TaskArgs, cfg: object) -> None:
            """L3: this tile's columns in two halves, one per chip."""
            a, b, c = args[0], args[1], args[2]
            half = c.shapes[1] // 2
            for chip in range(2):
                ta = TaskArgs()
                ta.add_tensor(a, TensorArgType.INPUT)
                ta.add_tensor(columns(b, chip * half, half), TensorArgType.INPUT)
                ta.add_tensor(columns(c, chip * half, half), TensorArgType.OUTPUT_EXISTING)
                o.submit_next_level(matmul, ta, worker=chip)

        tile = w4.register(tile_on_two_chips)
        w4.init()
        a_h, b_h, c_h = (w4.create_buffer(n * 4) for n in (M * K, K * N, M * N))
        A, B = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
        a_h.array((M, K), F32)[...] = A
        b_h.array((K, N), F32)[...] = B
        c_h.array((M, N), F32)[...] = np.nan
        width = N // TILES

        def orch(o: Orchestrator, args: object, cfg: object) -> None:
            for t in range(TILES):
                ta = TaskArgs()
                ta.add_tensor(a_h.tensor((M, K), F32), TensorArgType.INPUT)
                ta.add_tensor(b_h.tensor((K, width), F32, (N, 1), t * width * 4), TensorArgType.INPUT)
                ta.add_tensor(c_h.tensor((M, width), F32, (N, 1), t * width * 4), TensorArgType.OUTPUT_EXISTING)
                o.submit_next_level(tile, ta, worker=t // 2)

        w4.run(orch)
        C = c_h.array((M, N), F32).copy()  # a copy: no view outlives the Worker's buffers
        ok = bool(np.allclose(C, A @ B, rtol=1e-4, atol=1e-3))
        edges_l4 = w4.take_edge_log()
        below = w4.take_edge_logs_below()
        out(
            f"simpler demo --levels 4: C = A @ B ({M}x{K} @ {K}x{N}, float32) in {TILES} column tiles over "
            f"2 level-3 Workers (L4/L3[0], L4/L3[1]), each tile in 2 halves on its Worker's 2 chips"
        )
        out("")
        out(f"L4 edges inferred: {len(edges_l4)}")
        for path, lines in below.items():
            out(f"{path} edges inferred: {len(lines)}")
        out(f"C matches NumPy: {ok}")
        if trace:
            w4.write_trace(trace)
            out(f"trace written to {trace} (one process per Worker; open it in https://ui.perfetto.dev)")
        return 0 if ok and not edges_l4 and not any(below.values()) else 1
