"""simpler: a hierarchical task runtime whose tasks name their data with typed,
self-describing buffer handles and strided views instead of raw pointers.

Everything public in simpler.buffer, simpler.task_interface and simpler.deps is
re-exported here, with the runtime: Worker, Orchestrator, CallConfig, ChipCallable,
DeviceBuffer, MappedArgs, and the handles a run speaks of: TaskHandle (what a
submit returns), ChildRef and ChildKind (which child a task ran on)."""

from simpler import buffer, deps, task_interface
from simpler._core import CallConfig, ChildKind, ChildRef, TaskHandle
from simpler.buffer import *  # noqa: F403
from simpler.chip_callable import ChipCallable
from simpler.deps import *  # noqa: F403
from simpler.device_buffer import DeviceBuffer
from simpler.orchestrator import Orchestrator
from simpler.sub_worker import MappedArgs
from simpler.task_interface import *  # noqa: F403
from simpler.worker import CallableHandle, Worker

__all__ = sorted(
    set(buffer.__all__)
    | set(deps.__all__)
    | set(task_interface.__all__)
    | {"CallConfig", "CallableHandle", "ChildKind", "ChildRef", "ChipCallable", "DeviceBuffer", "MappedArgs",
       "Orchestrator", "TaskHandle", "Worker"}
)
