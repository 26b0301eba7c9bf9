"""Worker.take_edge_log's answer: the edges a Worker created with record_edges=True inferred since
the last call, as a list of EdgeExplanation, and how many more it did not keep.

The log is bounded like the trace: a Worker keeps at most `edge_log_capacity` edges (1,000,000 by
default) between two calls and only counts the ones after them, so a long run that never takes its
log does not grow with its tasks."""

from __future__ import annotations

from typing import Iterable, List

from simpler._core import EdgeExplanation


class EdgeLog(List[EdgeExplanation]):
    """The EdgeExplanations kept, in submit order (a list), and `dropped`: how many edges were
    inferred after the capacity was reached and not kept (0 when the log is whole)."""

    def __init__(self, edges: Iterable[EdgeExplanation] = (), dropped: int = 0) -> None:
        super().__init__(edges)
        self.dropped = dropped

    def __repr__(self) -> str:
        kept = super().__repr__()
        return f"EdgeLog({kept}, dropped={self.dropped})" if self.dropped else kept
