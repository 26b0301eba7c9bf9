"""simpler: a hierarchical task runtime whose tasks name their data with typed,
self-describing buffer handles and strided views instead of raw pointers.

This namespace is the user's API: the data model's public names (simpler.model.buffer,
.task_interface, .deps) but its machinery, which is simpler.abi's (the argument blob's
write_blob/read_blob/blob_size and DecodedTaskArgs, ChipStorageTaskArgs, DependencyTracker and its
scopes, check_identity_live), with the runtime: Worker, Orchestrator, CallConfig, ChipCallable,
DeviceBuffer, Domain and WindowBuffer (what Orchestrator.allocate_domain returns), GlobalDomain
(what Orchestrator.allocate_global_domain returns), MappedArgs,
AdoptedTensor (what Worker.share returns), RunFuture (what Worker.submit returns),
the collectives over a domain (all_reduce, all_gather, reduce_scatter, broadcast,
COLLECTIVE_DTYPES; from simpler.collectives), the progress display (show_progress, Progress,
ChildProgress), and the handles a run speaks of: TaskHandle (what a submit
returns), TaskHandles (what a batch submit returns), SubmittedTasks (what
Orchestrator.submitted is), EdgeLog (what Worker.take_edge_log returns), ChildRef and ChildKind
(which child a task ran on), ChildStatus (what Worker.child_status says of each child); DeviceFacts and
DeviceKind (what Worker.device_facts says a chip drives); and where the installed headers and
CMake package are: get_include(), get_cmake_dir()."""

from simpler import (
    abi as abi,  # the machinery, as simpler.abi once simpler is imported
    runtime_libraries as _runtime_libraries,
)
from simpler._core import (
    CallConfig,
    ChildKind,
    ChildRef,
    ChildStatus,
    DeviceFacts,
    DeviceKind,
    FailedTask,
    FailureReport,
    TaskHandle,
    TaskHandles,
    TaskKind,
)
from simpler.collectives import COLLECTIVE_DTYPES, all_gather, all_reduce, broadcast, reduce_scatter
from simpler.install_paths import get_cmake_dir, get_include
from simpler.model.buffer import (
    AccessMode,
    AddressSpace,
    BackendKind,
    BackingOwner,
    Buffer,
    BufferDescriptor,
    CanonicalIdentity,
    DataType,
    ImportRefusal,
    ImportRefused,
    ImportRegistry,
    MappedArg,
    SharedTensor,
    Tensor,
    create_buffer,
    default_registry,
    element_size,
    mapped_array,
    numpy_dtype,
    view_array,
)
from simpler.model.callable_handle import CallableHandle
from simpler.model.chip_callable import ChipCallable
from simpler.model.deps import (
    OVERLAP_DEFAULT_WORK_CAP,
    EdgeExplanation,
    EdgeKind,
    OverlapReason,
    TensorOverlap,
    overlap,
)
from simpler.model.device_buffer import DeviceBuffer
from simpler.model.domain import Domain, GlobalDomain, WindowBuffer
from simpler.model.edge_log import EdgeLog
from simpler.model.share import AdoptedTensor
from simpler.model.submitted_tasks import SubmittedTasks
from simpler.model.task_interface import (
    ChipTensor,
    TaskArgs,
    TaskArgsBatch,
    TensorArgType,
)
from simpler.runtime.errors import RunError
from simpler.runtime.orchestrator import Orchestrator
from simpler.runtime.progress import ChildProgress, Progress, show_progress
from simpler.runtime.runs import RunFuture
from simpler.runtime.sub_worker import MappedArgs
from simpler.worker import Worker

# The BLAS the chips load, registered before any chip process is forked.
_runtime_libraries.register()

# Every name of the __all__ of simpler.model.buffer, .deps, .share and .task_interface and of simpler.collectives
# but simpler.abi's, and the runtime's (tests/py/test_public_api.py checks that none is missing or in both).
__all__ = [
    "COLLECTIVE_DTYPES",
    "OVERLAP_DEFAULT_WORK_CAP",
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
    "ChildStatus",
    "ChipCallable",
    "ChipTensor",
    "DataType",
    "DeviceBuffer",
    "DeviceFacts",
    "DeviceKind",
    "Domain",
    "EdgeExplanation",
    "EdgeKind",
    "EdgeLog",
    "FailedTask",
    "FailureReport",
    "GlobalDomain",
    "ImportRefusal",
    "ImportRefused",
    "ImportRegistry",
    "MappedArg",
    "MappedArgs",
    "Orchestrator",
    "OverlapReason",
    "Progress",
    "RunError",
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
    "broadcast",
    "create_buffer",
    "default_registry",
    "element_size",
    "get_cmake_dir",
    "get_include",
    "mapped_array",
    "numpy_dtype",
    "overlap",
    "reduce_scatter",
    "show_progress",
    "view_array",
]
