"""SubmittedIds, the record of one-at-a-time submits behind Orchestrator.submitted: consecutive ids
are kept as one range, any other id as itself, and every way of reading the record (len, an index
from either end, iteration, reads between additions) gives the ids in the order they were added."""

import random

import pytest

from simpler import TaskHandle
from simpler.model.submitted_tasks import SubmittedIds, SubmittedTasks

RUN = 3


def _added(ids):
    part = SubmittedIds(RUN, ids[0])
    for t in ids[1:]:
        if t == part.end:  # what Orchestrator._submit_one does on its hot path
            part.end += 1
        else:
            part.add(t)
    return part


def _ids_with_gaps(rng, n):
    out, t = [], rng.randrange(1, 50)
    while len(out) < n:
        out.extend(range(t, t + rng.choice([1, 1, 2, 3, 50])))
        t = out[-1] + rng.choice([2, 5, 1000])
    return out[:n]


@pytest.mark.parametrize("seed", range(40))
def test_every_read_gives_the_ids_in_order(seed):
    rng = random.Random(seed)
    want = _ids_with_gaps(rng, rng.randrange(1, 400))
    part = _added(want)
    assert len(part) == len(want)
    assert [h.id for h in part] == want and all(h.run == RUN for h in part)
    for i in rng.sample(range(len(want)), min(len(want), 60)):
        assert part[i] == TaskHandle(want[i], RUN)
        assert part[i - len(want)] == TaskHandle(want[i], RUN)
    for bad in (len(want), -len(want) - 1):
        with pytest.raises(IndexError, match="out of range"):
            part[bad]


@pytest.mark.parametrize("seed", range(20))
def test_reads_between_additions_see_every_id_added_so_far(seed):
    rng = random.Random(100 + seed)
    want = _ids_with_gaps(rng, 300)
    part = SubmittedIds(RUN, want[0])
    view = SubmittedTasks([part])
    for n in range(1, len(want)):
        if rng.random() < 0.2:
            i = rng.randrange(n)
            assert len(view) == n and view[i].id == want[i] and view[-1].id == want[n - 1]
        part.add(want[n])
    assert [h.id for h in view] == want


def test_a_streamed_run_keeps_one_entry_and_an_interleaved_one_at_most_one_per_task():
    streamed = _added(list(range(7, 7 + 100_000)))
    assert len(streamed) == 100_000 and len(streamed.entries) == 1 and streamed[-1].id == 7 + 99_999
    alternate = list(range(1, 20_001, 2))  # every other id: another run took the ones between
    assert len(_added(alternate).entries) == len(alternate)
    pairs = [t for k in range(1, 10_001, 3) for t in (k, k + 1)]  # ranges of two: an id and a mark each
    assert len(_added(pairs).entries) == len(pairs) - 1  # the open range has no mark yet
