"""simpler: a hierarchical task runtime whose tasks name their data with typed,
self-describing buffer handles and strided views instead of raw pointers.

Everything public in simpler.buffer, simpler.task_interface and simpler.deps is
re-exported here, with the runtime: Worker, Orchestrator, CallConfig, ChipCallable,
DeviceBuffer, Domain and WindowBuffer (what Orchestrator.allocate_domain returns), GlobalDomain
(what Orchestrator.allocate_global_domain returns), MappedArgs,
AdoptedTensor (what Worker.share returns), RunFuture (what Worker.submit returns),
the collectives over a domain (all_reduce, all_gather, reduce_scatter, broadcast,
COLLECTIVE_DTYPES; from simpler.collectives), the progress display (show_progress, Progress,
ChildProgress), and the handles a run speaks of: TaskHandle (what a submit
returns), TaskHandles (what a batch submit returns), SubmittedTasks (what
Orchestrator.submitted is), ChildRef and ChildKind (which child a task ran on); and where the
installed headers and CMake package are: get_include(), get_cmake_dir()."""

from simpler import runtime_libraries as _runtime_libraries
from simpler._core import CallConfig, ChildKind, ChildRef, TaskHandle, TaskHandles, TaskKind
from simpler.buffer import *  # noqa: F403
from simpler.chip_callable import ChipCallable
from simpler.collectives import COLLECTIVE_DTYPES, all_gather, all_reduce, broadcast, reduce_scatter
from simpler.deps import *  # noqa: F403
from simpler.device_buffer import DeviceBuffer
from simpler.domain import Domain, WindowBuffer
from simpler.global_domain import GlobalDomain
from simpler.install_paths import get_cmake_dir, get_include
from simpler.orchestrator import Orchestrator
from simpler.progress import ChildProgress, Progress, show_progress
from simpler.run_future import RunFuture
from simpler.share import AdoptedTensor
from simpler.sub_worker import MappedArgs
from simpler.submitted_tasks import SubmittedTasks
from simpler.task_interface import *  # noqa: F403
from simpler.worker import CallableHandle, Worker

# The BLAS the chips load, registered before any chip process is forked.
_runtime_libraries.register()

# Every name of simpler.buffer, simpler.collectives, simpler.deps, simpler.share and simpler.task_interface's
# __all__, and the runtime's (tests/py/test_public_api.py checks that none is missing).
__all__ = [
    "COLLECTIVE_DTYPES",
    "HOST_SCOPE",
    "OVERLAP_DEFAULT_WORK_CAP",
    "WINDOW_SCOPE",
    "AccessMode",
    "AddressSpace",
    "AdoptedTensor",
    "BackendKind",
    "BackingOwner",
    "Buffer",
    "BufferDescriptor",
    "CallConfig",
    "CallableHandle",
    "CanonicalIdentity",
    "ChildKind",
    "ChildProgress",
    "ChildRef",
    "ChipCallable",
    "ChipStorageTaskArgs",
    "ChipTensor",
    "DataType",
    "DecodedTaskArgs",
    "DependencyTracker",
    "DeviceBuffer",
    "Domain",
    "EdgeExplanation",
    "EdgeKind",
    "GlobalDomain",
    "ImportRefusal",
    "ImportRefused",
    "ImportRegistry",
    "MappedArg",
    "MappedArgs",
    "Orchestrator",
    "OverlapReason",
    "Progress",
    "RunFuture",
    "SharedTensor",
    "SubmittedTasks",
    "TaskArgs",
    "TaskArgsBatch",
    "TaskHandle",
    "TaskHandles",
    "TaskKind",
    "Tensor",
    "TensorArgType",
    "TensorOverlap",
    "WindowBuffer",
    "Worker",
    "all_gather",
    "all_reduce",
    "blob_size",
    "broadcast",
    "check_identity_live",
    "create_buffer",
    "default_registry",
    "element_size",
    "get_cmake_dir",
    "get_include",
    "mapped_array",
    "numpy_dtype",
    "overlap",
    "read_blob",
    "reduce_scatter",
    "show_progress",
    "view_array",
    "write_blob",
]
