"""Remote L3 Workers over Open MPI (simpler.tree.remote): end to end under
`python -m simpler launch` (as root with --isolate: TCP-only MPI and a private
/dev/shm per non-zero rank, so nothing passes between the "hosts" but MPI),
and the refusals that need no mpirun."""

import os
import shutil

import pytest

from opencl_helpers import require_opencl
from remote_helpers import isolating, run_app, shm_objects
from simpler import Worker, _core
from simpler.cli import launch as launcher

needs_mpi = pytest.mark.skipif(
    not _core.remote_available() or shutil.which("mpirun") is None, reason="built without MPI, or no mpirun"
)


@pytest.fixture
def no_leaks():
    """No /dev/shm object of the L4's process is left on this host (the app names their
    prefix: other processes of the machine may create objects meanwhile) and no process
    of the job outlives it."""
    runs = []
    yield runs
    for r in runs:
        assert r.leftovers == [], r.stderr
        prefix = r.result.get("shm")
        if prefix:
            assert {n for n in shm_objects() if n.startswith(prefix)} == set()


@needs_mpi
def test_an_l4_with_a_local_and_two_remote_l3s_computes_a_tiled_matmul_and_a_reduction(no_leaks, tmp_path):
    log = tmp_path / "imports"
    log.mkdir()
    flags = ["--isolated"] if isolating() else []
    r = run_app("remote_matmul.py", 3, *flags, "--import-log", str(log))
    no_leaks.append(r)
    res = r.result
    assert res["ok"] == "ok", r.stdout + r.stderr
    assert res["chips_with_a"] == "6"  # the chips of all three L3s mapped A under the L4's identity
    assert (res["tile_edges"], res["edges_ok"]) == ("0", "True")  # disjoint tiles: no edge; only the total waits
    assert r.rc == 0, r.stderr


@needs_mpi
def test_a_column_block_moves_exactly_its_bytes_to_a_remote_chip_and_back(no_leaks):
    r = run_app("remote_strided.py", 2)
    no_leaks.append(r)
    res = r.result
    assert (res["sent"], res["received"]) == (res["block_bytes"], res["block_bytes"]), r.stdout
    assert res["only_block_written"] == "True"
    assert res["ok"] == "ok" and r.rc == 0, r.stdout + r.stderr


@needs_mpi
def test_a_killed_remote_rank_fails_its_task_naming_rank_child_and_task_and_the_rest_goes_on(no_leaks):
    r = run_app("remote_kill.py", 3)
    no_leaks.append(r)
    res = r.result
    assert res["ok"] == "ok", r.stdout + r.stderr
    assert "task 3 of run 0 (callable 'add_one', member 0) on worker 2 failed" in r.stderr
    assert "rank 2 (L4/L3[2]) was lost: no heartbeat for" in r.stderr
    assert (res["code"], res["path"]) == ("CHILD_DIED", "L4/L3[2]"), res  # the RunError's fields
    # mpirun itself exits 0 in recovery mode; the launcher says what happened
    assert "simpler launch: rank 2 (L4/L3[2]) was lost" in r.stderr
    assert r.rc == launcher.LOST_RANK_STATUS


@needs_mpi
def test_a_chip_failure_on_a_remote_l3_reaches_the_l4_as_a_run_error_with_every_level(no_leaks):
    r = run_app("remote_run_error.py", 2)
    no_leaks.append(r)
    res = r.result
    assert res["ok"] == "ok", r.stdout + r.stderr
    assert (res["path"], res["code"], res["levels"]) == ("L4/L3[0]/chip_0", "TASK_FAILED", "2"), res
    task, run, kind, index, code = res["top"].split(":")
    assert (f"{task}:{run}", kind, index, code) == (res["handle"], "worker", "0", "FAILED_BELOW"), res
    assert res["below"] == "3:std.vector_add:chip:0", res
    assert (res["cause_named"], res["message_has_path"]) == ("True", "True"), r.stderr
    assert r.rc == 0, r.stderr


@needs_mpi
def test_a_stopped_remote_rank_is_lost_killed_with_the_job_and_the_launcher_returns(no_leaks):
    # The stopped rank never exits by itself: mpirun waited for it for ever before (no_leaks
    # checks that no process of the job is left, the stopped rank among them).
    r = run_app("remote_faults.py", 3, "stop", timeout=120)
    no_leaks.append(r)
    assert r.result["ok"] == "ok", r.stdout + r.stderr
    assert "simpler launch: rank 2 (L4/L3[1]) was lost: no heartbeat for" in r.stderr
    assert (
        f"simpler launch: mpirun had not exited {launcher.FINISH_GRACE_S:g} s after rank 0 closed its Workers: "
        "the job was ended (every rank still running was killed)"
    ) in r.stderr, r.stderr
    assert r.rc == launcher.LOST_RANK_STATUS


@needs_mpi
def test_a_killed_l4_rank_makes_the_launcher_exit_non_zero_naming_rank_0(no_leaks):
    r = run_app("remote_faults.py", 3, "kill_l4", timeout=120)
    no_leaks.append(r)
    assert r.stdout.startswith("RESULT ran"), r.stdout + r.stderr  # the L4 ran, then was killed
    assert "simpler launch: rank 0 (the L4) died before it closed its Workers (killed or crashed)" in r.stderr
    assert r.rc == launcher.LOST_RANK_STATUS  # it was 0


@needs_mpi
def test_a_callable_that_does_not_resolve_on_a_rank_fails_init_naming_the_rank_and_the_path(no_leaks):
    r = run_app("remote_unresolved.py", 2)
    no_leaks.append(r)
    assert r.result["ok"] == "ok", r.stdout + r.stderr
    assert "rank 1 (L4/L3[0]) did not start: cannot resolve 'rank0_only:fn': ModuleNotFoundError" in r.stderr


@needs_mpi
def test_ranks_beyond_the_remote_children_are_dismissed_and_exit(no_leaks):
    r = run_app("hello_remote.py", 4)  # 2 remote children: rank 3 is not needed
    no_leaks.append(r)
    assert "RESULT True" in r.stdout and r.rc == 0, r.stdout + r.stderr


# -- refusals that need no mpirun ------------------------------------------
def module_level_orchestration(o, args, cfg):
    pass


def test_add_remote_workers_refuses_what_a_remote_tree_cannot_be():
    w3 = Worker(level=3)
    with pytest.raises(ValueError, match="level-3 Worker's next level is chips"):
        w3.add_remote_workers(1)
    w4 = Worker(level=4)
    with pytest.raises(ValueError, match=r"add_remote_workers.n: must be > 0 \(got 0\)"):
        w4.add_remote_workers(0)
    with pytest.raises(ValueError, match=r"WorkerConfig\.num_chips"):
        w4.add_remote_workers(1, num_chips=-1)
    with pytest.raises(TypeError, match="no option 'bogus'"):
        w4.add_remote_workers(1, bogus=1)
    with pytest.raises(ValueError, match="heartbeat_timeout: seconds"):
        w4.add_remote_workers(1, heartbeat_timeout=0)
    assert w4.add_remote_workers(2, num_chips=1) == [0, 1]
    with pytest.raises(RuntimeError, match="add the local children before add_remote_workers"):
        w4.add_worker(Worker(level=3))
    w5 = Worker(level=5)
    with pytest.raises(ValueError, match="children of a level-4 Worker"):
        w5.add_remote_workers(1)


def test_a_closure_cannot_go_to_a_remote_worker_and_init_says_which(monkeypatch):
    for var in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(var, raising=False)
    w4 = Worker(level=4)
    w4.add_remote_workers(1, num_chips=1)
    w4.register(lambda o, a, c: None)
    with pytest.raises(ValueError, match="<lambda>' cannot be named on another host"):
        w4.init()
    w4.close()


def test_remote_workers_outside_mpirun_say_how_to_launch(monkeypatch):
    for var in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(var, raising=False)
    if not _core.remote_available():
        pytest.skip("built without MPI")
    w4 = Worker(level=4)
    w4.add_remote_workers(2, num_chips=1)
    w4.register(module_level_orchestration)
    with pytest.raises(RuntimeError, match="python -m simpler launch -n 3"):
        w4.init()
    w4.close()


def test_registration_by_import_path_resolves_at_init_and_names_the_path():
    w = Worker(level=3, num_sub_workers=1)
    with pytest.raises(ValueError, match="not an import path"):
        w.register("no_colon_here")
    w.register("simpler_no_such_module:fn")
    with pytest.raises(RuntimeError, match="cannot resolve 'simpler_no_such_module:fn': ModuleNotFoundError"):
        w.init()
    w.close()


def test_the_launcher_builds_an_isolated_loopback_job_with_recovery(monkeypatch):
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    cmd = launcher.command(3, ["app.py", "x"], isolate=True, python="py")
    text = " ".join(cmd)
    assert "--allow-run-as-root" in cmd and "--oversubscribe" in cmd
    assert "btl_tcp_if_include lo" in text and "oob_tcp_if_include lo" in text
    assert "--mca btl self,tcp" in text and "--mca pml ob1" in text
    assert "orte_enable_recovery 1" in text or "--enable-recovery" in cmd
    assert text.endswith(
        "-n 1 py app.py x : -n 2 " + shutil.which("unshare") + " -m -- sh -c " + launcher._ISOLATE + " sh py app.py x"
    )
    plain = launcher.command(2, ["app.py"], mpirun_args=["--hostfile", "hosts"], python="py")
    assert "unshare" not in " ".join(plain) and "btl_tcp_if_include" not in plain
    assert plain[-3:] == ["-n", "2", "py"] or plain[-4:] == ["-n", "2", "py", "app.py"]


@needs_mpi
def test_device_memory_on_a_remote_chip_is_allocated_and_copied_by_the_l3_orchestration_there(no_leaks):
    r = run_app("remote_device.py", 2)
    no_leaks.append(r)
    assert r.result["ok"] == "ok" and r.rc == 0, r.stdout + r.stderr


@needs_mpi
def test_opencl_chips_of_a_local_and_a_remote_l3_run_an_opencl_kernel(no_leaks):
    require_opencl()
    r = run_app("remote_opencl.py", 2)
    no_leaks.append(r)
    assert r.result["ok"] == "ok" and r.rc == 0, r.stdout + r.stderr
