"""simpler: a hierarchical task runtime whose tasks name their data with typed,
self-describing buffer handles and strided views instead of raw pointers.

Everything public in simpler.buffer and simpler.task_interface is re-exported here."""

from simpler import buffer, task_interface
from simpler.buffer import *  # noqa: F403
from simpler.task_interface import *  # noqa: F403

__all__ = sorted(set(buffer.__all__) | set(task_interface.__all__))
