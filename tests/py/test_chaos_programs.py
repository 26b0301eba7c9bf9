"""The seeded chaos programs (tests/chaos, docs/internals/reliability.md): the generator
keeps the rules that give every task one meaning, the model's views are the
runtime's geometry, the model finds a dependency the runtime would have
dropped, and the quick slice (20 fixed seeds, each with its fault) ends right
or clearly failed, leaving no process, thread or /dev/shm object behind."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

CHAOS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "chaos")
sys.path.insert(0, CHAOS)
from model import accesses, conflicts, evaluate, start_values, view_of  # noqa: E402 - tests/chaos is put on the path first
from program import FAULTS, MAX_TASKS, generate  # noqa: E402

SEEDS = range(1, 301)
SURE_FAULTS = ("task_raise", "chip_fail", "hang", "named_again", "domain_again")


def test_a_seed_makes_one_program():
    assert generate(7) == generate(7)
    assert generate(7) != generate(8)
    assert generate(7, faults=True) == generate(7, faults=True)


def test_every_fault_kind_is_drawn_and_each_program_has_one():
    programs = [generate(s, faults=True) for s in range(1, 301)]
    assert all(p.fault is not None for p in programs)
    assert {p.fault.kind for p in programs} == set(FAULTS)
    for p in programs:  # a marked op is in a run; a sigint's step is a blocking run
        marked = [op for s in p.steps for op in s.ops if op.fault]
        assert (len(marked) == 1) == (
            p.fault.kind in ("task_raise", "chip_fail", "hang", "named_again", "domain_again")
        )
        assert all(op.fault == p.fault.kind for op in marked)
        if p.fault.kind == "sigint":
            assert p.steps[p.fault.step].what == "run" and not p.steps[p.fault.step].future
        # a rank fault names a remote child; a kill of a process below rank 0 names a local one
        if p.fault.kind in ("rank_kill", "rank_stop"):
            assert p.tree.rank(p.fault.child) > 0
        if p.fault.kind in ("l3_kill", "below_kill"):
            assert p.tree.rank(p.fault.child) == 0
        assert not (p.tree.remote and p.fault.kind == "top_kill")  # under mpirun the launcher handles rank 0
    assert 0.05 < sum(1 for p in programs if p.tree.remote) / len(programs) < 0.2


def _log(p):
    """A log as the runner writes it, every op submitted."""
    log, seen = [], set()
    for i, step in enumerate(p.steps):
        for op in step.ops:
            for v in (v for m in op.members or [op] for v in m.views):
                if v.buf not in seen:
                    seen.add(v.buf)
                    log.append(("create", v.buf))
            log.append(("op", op, i, []))
    return log


def test_the_model_finds_a_dependant_that_ran_after_its_producer_failed():
    # Seed 9 has dependent ops in one run: say the first op that another depends on failed, and everything else
    # ran. That is a dependency the runtime dropped, and the model says which.
    p = generate(9)
    log = _log(p)
    ops = [e for e in log if e[0] == "op"]
    victim = next(
        e
        for e in ops
        if e[1].kind != "staged"
        and any(
            f[2] == e[2] and f is not e and ops.index(f) > ops.index(e) and conflicts(accesses(e[1]), accesses(f[1]))
            for f in ops
        )
    )

    def tasks(e, what):
        return [what] * (2 if e[1].kind == "staged" else 1)

    out = evaluate(
        p, log, lambda e: tasks(e, "failed" if e is victim else "ok"), lambda e: e is victim, lambda m, e: m[2] != e[2]
    )
    assert out.problems and all("ran although" in x and victim[1].text() in x for x in out.problems)
    assert not evaluate(p, log, lambda e: tasks(e, "ok"), lambda e: False, lambda m, e: False).problems
    # Said to have failed while the fault did not touch it: a failure the model cannot explain.
    out = evaluate(p, log, lambda e: tasks(e, "failed" if e is victim else "none"), lambda e: False, lambda m, e: False)
    assert out.problems[0].startswith(victim[1].text()) and "the fault did not touch it" in out.problems[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_programs_keep_the_rules(seed):
    p = generate(seed)
    assert 5 <= p.task_count() <= MAX_TASKS + 4  # the last op may be a group, or a staged copy
    level, l3s = p.tree.level, p.tree.l3s
    assert (level == 3 and len(l3s) == 1) or (level == 4 and 1 <= len(l3s) <= 2)
    assert 0 <= p.tree.remote <= len(l3s) and (level == 4 or not p.tree.remote)
    assert all(1 <= c <= 2 and 0 <= s <= 2 for c, s in l3s)
    live = {b for b in range(len(p.buffers)) if not any(s.what == "create" and s.buf == b for s in p.steps)}
    assert 1 <= len(live) <= 4
    for step in p.steps:
        if step.what == "release":
            live.remove(step.buf)
        elif step.what == "create":
            live.add(step.buf)
        for op in step.ops:
            members = op.members or [op]
            for m in members:
                *ins, out = m.views
                assert all(v.buf in live for v in m.views), "a view of a buffer not live"
                assert not any(out.touches(v) for v in ins), "an output overlaps its own task's inputs"
                assert out.buf != p.const, "a write to the constant buffer"
                assert all(t != "NO_DEP" or v.buf == p.const for v, t in zip(ins, m.tags, strict=False))
                chips, subs = l3s[m.child]
                assert (m.kind in ("fold", "sum") and subs) or m.chip < chips
                for v in m.views:
                    rows, cols = p.buffers[v.buf]
                    assert max(v.elements()) < rows * cols and v.cols == cols
            for i, a in enumerate(members):  # a group's members touch disjoint elements
                for b in members[i + 1 :]:
                    assert not any(x.touches(y) for x in a.views for y in b.views)


@pytest.mark.parametrize("seed", range(1, 41))
def test_the_models_views_are_the_runtimes_geometry(seed):
    # The runtime reads a view from its offset and strides (View.offset(), View.strides()); the model slices.
    p = generate(seed)
    for step in p.steps:
        for op in step.ops:
            for v in (v for m in op.members or [op] for v in m.views):
                arr = start_values(p, v.buf)
                flat = arr.ravel()
                s0, s1 = v.strides()
                want = np.array([[flat[v.offset() + i * s0 + j * s1] for j in range(v.w)] for i in range(v.h)])
                assert np.array_equal(view_of(arr, v), want)
                marks = np.zeros_like(arr)  # the elements the generator's overlap checks see are the ones written
                view_of(marks, v)[...] = 1
                assert set(np.flatnonzero(marks.ravel()).tolist()) == v.elements()


@pytest.mark.parametrize("faults", ["--faults", "--no-faults"])
def test_twenty_fixed_seeds_end_right_or_clearly_failed_and_leave_nothing(faults):
    r = subprocess.run(
        [sys.executable, os.path.join(CHAOS, "driver.py"), "--programs", "20", "--seed", "1", faults],
        capture_output=True,
        text=True,
        timeout=20 * 120,
    )
    lines = r.stdout.strip().splitlines()
    assert lines, r.stderr
    summary = json.loads(lines[-1])
    assert r.returncode == 0 and summary["failed"] == 0, "\n".join(lines[:-1]) + r.stderr[-4000:]
    assert summary["programs"] == 20 and summary["tasks"] > 20 * 5
    assert summary["leaked_processes"] == 0 and summary["leaked_shm_objects"] == 0
    landed = sum(n for _, n in summary["faults"].values())
    # A kill or a SIGINT may come after the program's last task; the other faults always land.
    sure = sum(1 for s in range(1, 21) if generate(s, faults=True).fault.kind in SURE_FAULTS)
    assert (landed >= sure > 5) if faults == "--faults" else not summary["faults"]
