"""The package's public names: `simpler.__all__` re-exports every public name of
simpler.model.buffer, simpler.model.deps, simpler.model.share, simpler.model.task_interface and
simpler.collectives, and each name resolves."""

import concurrent.futures

import simpler
from simpler import collectives
from simpler.model import buffer, deps, share, task_interface


def test_all_covers_every_submodule_export():
    exported = (
        set(buffer.__all__)
        | set(collectives.__all__)
        | set(deps.__all__)
        | set(share.__all__)
        | set(task_interface.__all__)
    )
    missing = exported - set(simpler.__all__)
    assert not missing, f"simpler.__all__ lacks {sorted(missing)}"


def test_every_exported_name_resolves():
    assert len(set(simpler.__all__)) == len(simpler.__all__)
    for name in simpler.__all__:
        assert getattr(simpler, name) is not None, name


def test_a_run_future_is_a_concurrent_future():
    # asyncio.wrap_future accepts exactly concurrent.futures.Future instances
    assert issubclass(simpler.RunFuture, concurrent.futures.Future)
