"""Dependency inference: the overlap question and the dependency tracker.

`overlap(probe, entry)` answers (TensorOverlap, OverlapReason) for two views of one
backing; only NONE drops an edge. `DependencyTracker` infers each submitted task's
predecessors from its tensor arguments and tags, and explains every edge it added.
"""

from simpler._core import (
    HOST_SCOPE,
    OVERLAP_DEFAULT_WORK_CAP,
    WINDOW_SCOPE,
    DependencyTracker,
    EdgeExplanation,
    EdgeKind,
    OverlapReason,
    TensorOverlap,
    overlap,
)

__all__ = [
    "HOST_SCOPE",
    "OVERLAP_DEFAULT_WORK_CAP",
    "WINDOW_SCOPE",
    "DependencyTracker",
    "EdgeExplanation",
    "EdgeKind",
    "OverlapReason",
    "TensorOverlap",
    "overlap",
]
