"""The package's public names: `simpler.__all__` (the user's API) and `simpler.abi.__all__` (the wire
and the engine's machinery) together re-export every public name of simpler.model.buffer,
simpler.model.deps, simpler.model.share, simpler.model.task_interface and simpler.collectives, each
in one of them, and each name resolves."""

import concurrent.futures

import simpler
import simpler.abi
from simpler import buffer as seed_buffer, collectives, task_interface as seed_task_interface
from simpler.model import buffer, deps, share, task_interface


def test_all_covers_every_submodule_export_once():
    exported = (
        set(buffer.__all__)
        | set(collectives.__all__)
        | set(deps.__all__)
        | set(share.__all__)
        | set(task_interface.__all__)
    )
    missing = exported - set(simpler.__all__) - set(simpler.abi.__all__)
    assert not missing, f"neither simpler.__all__ nor simpler.abi.__all__ has {sorted(missing)}"
    both = set(simpler.__all__) & set(simpler.abi.__all__)
    assert not both, f"in the user's API and in the machinery: {sorted(both)}"


def test_every_exported_name_resolves():
    for module in (simpler, simpler.abi):
        assert len(set(module.__all__)) == len(module.__all__)
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_the_machinery_is_not_in_the_users_namespace_but_keeps_the_memory_models_paths():
    for name in simpler.abi.__all__:
        assert not hasattr(simpler, name), name
    # The memory model's module paths name them still, as the same objects.
    assert seed_task_interface.write_blob is simpler.abi.write_blob
    assert seed_task_interface.read_args_from_blob is simpler.abi.read_blob
    assert seed_task_interface.ChipStorageTaskArgs is simpler.abi.ChipStorageTaskArgs
    assert seed_buffer.check_identity_live is simpler.abi.check_identity_live


def test_a_run_future_is_a_concurrent_future():
    # asyncio.wrap_future accepts exactly concurrent.futures.Future instances
    assert issubclass(simpler.RunFuture, concurrent.futures.Future)
