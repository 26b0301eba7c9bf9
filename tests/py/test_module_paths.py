"""The module paths and names the memory model's text and snippets use import
as written (docs/explanation/memory-model.md, and the user document it comes
from): `simpler.buffer` holds the buffer model (Buffer, Tensor,
ImportRegistry, MappedArg, default_registry, ...), `simpler.task_interface`
the task arguments and the wire Tensor re-exported, each name the very object
the layered modules and the package define, so a program written from the
document keeps working when the package's layers move."""

import importlib

import pytest

import simpler
import simpler.model.buffer
import simpler.model.task_interface

# Every (module, name) the document's text and snippets write.
SEED_NAMES = [
    ("simpler.buffer", "Buffer"),
    ("simpler.buffer", "Tensor"),
    ("simpler.buffer", "ImportRegistry"),
    ("simpler.buffer", "MappedArg"),
    ("simpler.buffer", "default_registry"),
    ("simpler.buffer", "BufferDescriptor"),
    ("simpler.buffer", "CanonicalIdentity"),
    ("simpler.buffer", "AccessMode"),
    ("simpler.buffer", "AddressSpace"),
    ("simpler.buffer", "BackendKind"),
    ("simpler.buffer", "DataType"),
    ("simpler.task_interface", "Tensor"),
    ("simpler.task_interface", "ChipTensor"),
    ("simpler.task_interface", "TaskArgs"),
    ("simpler.task_interface", "TensorArgType"),
    ("simpler.task_interface", "DataType"),
    ("simpler.task_interface", "read_args_from_blob"),
    ("simpler", "Worker"),
    ("simpler", "Orchestrator"),
    ("simpler", "TaskArgs"),
    ("simpler", "TensorArgType"),
    ("simpler", "DataType"),
]
# Members the snippets call on those names.
SEED_MEMBERS = [
    ("simpler.buffer", "ImportRegistry", "materialize_args"),
    ("simpler.buffer", "Buffer", "tensor"),
    ("simpler.buffer", "Buffer", "shm"),
    ("simpler.buffer", "Buffer", "close"),
    ("simpler.task_interface", "TaskArgs", "add_tensor"),
    ("simpler", "Worker", "create_buffer"),
    ("simpler", "Worker", "alloc_shared_tensor"),
    ("simpler", "Worker", "run"),
    ("simpler", "Worker", "release_buffer"),
    ("simpler", "Orchestrator", "alloc_child_tensor"),
    ("simpler", "Orchestrator", "submit_next_level"),
    ("simpler", "Orchestrator", "copy_to"),
]


@pytest.mark.parametrize("module,name", SEED_NAMES)
def test_every_name_the_document_writes_imports_from_its_module(module, name):
    mod = importlib.import_module(module)
    assert hasattr(mod, name), f"{module} has no {name}"
    if name != "read_args_from_blob":
        assert getattr(mod, name) is getattr(simpler, name), f"{module}.{name} is not simpler.{name}"


@pytest.mark.parametrize("module,name,member", SEED_MEMBERS)
def test_every_member_the_snippets_call_exists(module, name, member):
    assert hasattr(getattr(importlib.import_module(module), name), member), f"{module}.{name}.{member}"


def test_the_two_module_paths_are_the_layered_modules_names_object_for_object():
    import simpler.buffer
    import simpler.task_interface

    assert simpler.buffer.Tensor is simpler.task_interface.Tensor is simpler.Tensor
    assert simpler.task_interface.read_args_from_blob is simpler.task_interface.read_blob is simpler.abi.read_blob
    pairs = [(simpler.buffer, simpler.model.buffer), (simpler.task_interface, simpler.model.task_interface)]
    for seed, layered in pairs:
        assert set(layered.__all__) <= set(seed.__all__), (seed.__name__, set(layered.__all__) - set(seed.__all__))
        for name in seed.__all__:
            assert getattr(seed, name) is getattr(layered, name, getattr(seed, name)), (seed.__name__, name)


def test_a_program_written_from_the_document_runs():
    """The document's snippets, as one program: a buffer, a view, a TaskArgs naming it, a run that
    submits it to a chip, the bytes read back through the buffer's shm."""
    import numpy as np

    from simpler import ChipCallable, Worker
    from simpler.buffer import Buffer, Tensor
    from simpler.task_interface import DataType, TaskArgs, TensorArgType

    n = 16
    worker = Worker(level=3, num_chips=1)
    copy = worker.register(ChipCallable("std.copy"))
    worker.init()
    try:
        a_h, out_h = worker.create_buffer(n * 4), worker.create_buffer(n * 4)
        assert isinstance(a_h, Buffer)
        np.frombuffer(a_h.shm.buf, dtype=np.float32, count=n)[:] = np.arange(n)
        t = a_h.tensor((n,), DataType.FLOAT32)
        assert isinstance(t, Tensor)

        def my_orch(orch, _args, _cfg):
            ta = TaskArgs()
            ta.add_tensor(t, TensorArgType.INPUT)
            ta.add_tensor(out_h.tensor((n,), DataType.FLOAT32), TensorArgType.OUTPUT_EXISTING)
            orch.submit_next_level(copy, ta, worker=0)

        worker.run(my_orch)
        result = np.frombuffer(out_h.shm.buf, dtype=np.float32, count=n).copy()
        np.testing.assert_array_equal(result, np.arange(n, dtype=np.float32))
    finally:
        worker.close()
