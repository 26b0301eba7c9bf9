"""Worker.register after init(): a callable registered on a running level-3
Worker is installed in every child of its kind before register() returns —
sub-worker callables by import path or pickled by reference, chip callables
from source or by name — and runs there; a callable a child cannot install
fails register() naming the child and the cause, and the Worker and its other
callables go on; register() may run while a run is in flight, from the
orchestration function or from another thread."""

import json
import os
import struct
import sys
import threading
import time
import types

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TaskKind, TensorArgType, Worker
from simpler._core import TracePhase
from worker_helpers import CHIP_SOURCES, args, closing, fail_cause, kernel_callable, time_bound  # noqa: F401

OUT = TensorArgType.OUTPUT_EXISTING
IN = TensorArgType.INPUT


def stamp_here(args_):
    """Module-level, so it pickles by reference: pid and scalar 0 + 1000 into args[0]."""
    out = args_.array(0)
    out[0] = os.getpid()
    out[1] = args_.scalars[0] + 1000


def double(args_):
    args_.array(1)[:] = args_.array(0) * 2


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def sub_pids(w):
    return set(w.child_pids()[w.num_chips : w.num_chips + w.num_sub_workers])


def run_on_every_sub_worker(w, handle, marker):
    """Runs `handle` as a group with one member per sub-worker (N distinct
    sub-workers at once); returns the (pid, value) pairs the members wrote."""
    n = w.num_sub_workers
    out = w.alloc_shared_tensor((n, 2), DataType.INT64)
    out.array()[:] = -1
    w.run(
        lambda o, _a, _c: o.submit_sub_group(
            handle, [args((out.tensor((2,), byte_offset=16 * i), OUT), scalars=(marker,)) for i in range(n)]
        )
    )
    return {(int(p), int(v)) for p, v in out.array()}


@pytest.fixture
def sub_worker(closing):
    w = Worker(level=3, num_sub_workers=2)
    closing(w)
    w.register(double)
    w.init()
    return w


def test_sub_callables_registered_after_init_run_on_every_sub_worker(sub_worker):
    w = sub_worker
    by_path = w.register("late_callables:stamp")
    pickled = w.register(stamp_here)
    assert by_path.kind == TaskKind.SUB and by_path.name == "late_callables:stamp"
    assert pickled.name == "stamp_here"
    assert w.callable_name(TaskKind.SUB, by_path.id) == "late_callables:stamp"
    assert list(w.config.sub_callable_names) == ["double", "late_callables:stamp", "stamp_here"]
    pids = sub_pids(w)
    assert run_on_every_sub_worker(w, by_path, 7) == {(p, 7) for p in pids}
    assert run_on_every_sub_worker(w, pickled, 7) == {(p, 1007) for p in pids}


def test_chip_callables_registered_after_init_run_on_every_chip(closing, tmp_path):
    w = Worker(level=3, num_chips=2, trace=True)
    closing(w)
    w.init()
    fill = w.register(ChipCallable.from_source(CHIP_SOURCES / "late_kernels.cpp", "late.fill"))
    add = w.register(ChipCallable("std.add_scalar"))
    assert (fill.name, add.name) == ("late.fill", "std.add_scalar")
    again = w.register(ChipCallable.from_source(CHIP_SOURCES / "late_kernels.cpp", "late.fill"))  # loaded already
    assert (fill.id, add.id, again.id) == (2, 3, 4)  # after the runtime's std.copy and std.sum_n
    a = w.alloc_shared_tensor((2, 8), DataType.FLOAT32)
    c = w.alloc_shared_tensor((2, 8), DataType.FLOAT32)

    def orch(o, _a, _c):
        for chip in (0, 1):
            row = a.tensor((8,), byte_offset=32 * chip)
            o.submit_next_level(fill, args((row, OUT), scalars=(f32_bits(chip + 1.5),)), worker=chip)
            o.submit_next_level(
                add,
                args((row, IN), (c.tensor((8,), byte_offset=32 * chip), OUT), scalars=(f32_bits(10.0),)),
                worker=chip,
            )

    w.run(orch)
    assert np.array_equal(a.array(), [[1.5] * 8, [2.5] * 8])
    assert np.array_equal(c.array(), [[11.5] * 8, [12.5] * 8])
    ran = {
        e.child.name()
        for e in w.trace_events()
        if e.phase == TracePhase.RUN and e.kind == TaskKind.NEXT_LEVEL and e.callable == fill.id
    }
    assert ran == {"chip 0", "chip 1"}
    assert w.callable_name(TaskKind.NEXT_LEVEL, fill.id) == "late.fill"
    w.write_trace(tmp_path / "run.json")
    slices = {e["name"] for e in json.loads((tmp_path / "run.json").read_text())["traceEvents"] if e.get("ph") == "X"}
    assert {"late.fill", "std.add_scalar"} <= slices


def boom(args_):
    raise KeyError("late boom")


def test_a_failing_late_callable_is_named_in_the_run_error(closing):
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    closing(w)
    w.init()
    fails_on_chip = w.register(kernel_callable("test.fail"))
    fails_in_sub = w.register(boom)
    ta = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    with pytest.raises(RuntimeError, match=r"(?s)callable 'boom'.*on sub-worker 0 failed.*KeyError: 'late boom'"):
        w.run(lambda o, _a, _c: o.submit_sub(fails_in_sub, args((ta.tensor(), OUT))))
    with pytest.raises(RuntimeError, match=r"(?s)callable 'test.fail'.*on chip 0 failed.*" + fail_cause()):
        w.run(lambda o, _a, _c: o.submit_next_level(fails_on_chip, args((ta.tensor(), OUT), scalars=(0,)), worker=0))


def test_a_callable_pickle_cannot_carry_is_refused_before_anything_is_sent(sub_worker):
    w = sub_worker
    with pytest.raises(TypeError, match=r"pickle cannot carry it .*'pkg\.module:fn'"):
        w.register(lambda a: None)

    def local(a):
        pass

    with pytest.raises(TypeError, match="local"):
        w.register(local)
    with pytest.raises(RuntimeError, match=r"cannot resolve 'simpler_no_such_module:fn'.*ModuleNotFoundError"):
        w.register("simpler_no_such_module:fn")
    with pytest.raises(ValueError, match="not an import path"):
        w.register("no_colon_here")
    assert len(w.config.sub_callable_names) == 1  # nothing was taken
    assert run_on_every_sub_worker(w, w.register(stamp_here), 1) == {(p, 1001) for p in sub_pids(w)}


def test_a_callable_the_sub_workers_cannot_import_fails_register_naming_each_and_the_worker_goes_on(sub_worker):
    w = sub_worker
    module = types.ModuleType("simpler_made_after_init")  # exists in this process only
    exec("def fn(args):\n    pass\n", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        with pytest.raises(RuntimeError) as e:
            w.register(module.fn)
    finally:
        del sys.modules[module.__name__]
    text = str(e.value)
    assert "'fn' could not be installed on 2 children" in text
    assert "sub-worker 0: ModuleNotFoundError" in text and "sub-worker 1: ModuleNotFoundError" in text
    assert "no handle was returned" in text
    # The Worker, its earlier callables and a later registration all still run.
    x = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    y = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    x.array()[:] = 3.0
    earlier = w.register(double)  # by the same function as callable 0: a handle of its own
    assert earlier.id == 2  # the refused install took id 1
    w.run(lambda o, _a, _c: o.submit_sub(earlier, args((x.tensor(), IN), (y.tensor(), OUT))))
    assert np.array_equal(y.array(), [6.0] * 4)
    assert run_on_every_sub_worker(w, w.register("late_callables:stamp"), 2) == {(p, 2) for p in sub_pids(w)}
    assert all(not s.lost and not s.below_lost for s in w.child_status())


def test_a_sub_worker_that_dies_installing_is_named_and_lost_and_the_rest_goes_on(closing, monkeypatch):
    monkeypatch.setenv("SIMPLER_TEST_PARENT_PID", str(os.getpid()))  # late_killer kills any other importer
    w = Worker(level=3, num_chips=1, num_sub_workers=2)
    closing(w)
    w.init()
    with pytest.raises(RuntimeError) as e:
        w.register("late_killer:fn")
    text = str(e.value)
    assert "'late_killer:fn' could not be installed on 2 children" in text, text
    assert "sub-worker 0: " in text and "sub-worker 1: " in text and text.count("killed by signal 9") == 2, text
    status = w.child_status()
    assert str(status[0]) == "chip 0: usable" and status[1].lost and status[2].lost, status
    add = w.register(ChipCallable("std.add_scalar"))  # the chip still takes late callables
    a = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    c = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    w.run(
        lambda o, _a, _c: o.submit_next_level(
            add, args((a.tensor(), IN), (c.tensor(), OUT), scalars=(f32_bits(2.0),)), worker=0
        )
    )
    assert np.array_equal(c.array(), [2.0] * 4)
    assert w.register(stamp_here).id == 1  # no sub-worker left to ask: the refused install took id 0


def test_a_function_defined_in_main_after_init_is_refused_with_the_way_out(sub_worker):
    w = sub_worker
    main = sys.modules["__main__"]

    def made_in_main(args_):
        pass

    made_in_main.__module__, made_in_main.__qualname__ = "__main__", "simpler_made_in_main"
    main.simpler_made_in_main = made_in_main
    try:
        with pytest.raises(
            RuntimeError,
            match=r"sub-worker 0: AttributeError.*__main__ after init\(\).*"
            r"'pkg\.module:fn'",
        ):
            w.register(made_in_main)
    finally:
        delattr(main, "simpler_made_in_main")


def test_a_chip_library_or_name_refused_in_the_parent_takes_nothing_and_the_chips_go_on(closing, tmp_path):
    w = Worker(level=3, num_chips=2)
    closing(w)
    w.init()
    with pytest.raises(ValueError, match=r"no chip orchestration named 'late.nope'"):
        w.register(ChipCallable.from_source(CHIP_SOURCES / "late_kernels.cpp", "late.nope"))
    bad = tmp_path / "bad.cpp"
    bad.write_text("this is not C++\n")
    with pytest.raises(RuntimeError):
        ChipCallable.from_source(bad, "bad.orch", cache_dir=str(tmp_path))
    add = w.register(ChipCallable("std.add_scalar"))
    assert add.id == 2  # after std.copy and std.sum_n: the refusals took no id
    a = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    c = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    w.run(
        lambda o, _a, _c: o.submit_next_level(
            add, args((a.tensor(), IN), (c.tensor(), OUT), scalars=(f32_bits(1.0),)), worker=1
        )
    )
    assert np.array_equal(c.array(), [1.0] * 4)


def test_a_chip_library_the_chips_refuse_fails_register_naming_each_chip(closing, monkeypatch):
    monkeypatch.setenv("SIMPLER_TEST_PARENT_PID", str(os.getpid()))  # the library loads here only
    w = Worker(level=3, num_chips=2)
    closing(w)
    w.init()
    parent_only = ChipCallable.from_source(CHIP_SOURCES / "parent_only.cpp", "parent_only.noop")
    with pytest.raises(RuntimeError) as e:
        w.register(parent_only)
    text = str(e.value)
    assert "'parent_only.noop' could not be installed on 2 children" in text
    assert "(chip 0: chip library" in text and "; chip 1: chip library" in text and "chip 0: chip 0" not in text
    assert "built for chip ABI 1002" in text
    fill = w.register(ChipCallable.from_source(CHIP_SOURCES / "late_kernels.cpp", "late.fill"))
    a = w.alloc_shared_tensor((2, 4), DataType.FLOAT32)
    w.run(
        lambda o, _a, _c: [
            o.submit_next_level(
                fill, args((a.tensor((4,), byte_offset=16 * i), OUT), scalars=(f32_bits(4.0),)), worker=i
            )
            for i in (0, 1)
        ]
    )
    assert np.array_equal(a.array(), [[4.0] * 4] * 2)


def test_register_from_inside_an_orchestration_function_is_ordered_with_the_tasks(closing):
    w = Worker(level=3, num_chips=1, num_sub_workers=1)
    closing(w)
    first = w.register(double)
    w.init()
    x = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    y = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    s = w.alloc_shared_tensor((2,), DataType.INT64)
    z = w.alloc_shared_tensor((4,), DataType.FLOAT32)
    x.array()[:] = 1.0
    made = {}

    def orch(o, _a, _c):
        o.submit_sub(first, args((x.tensor(), IN), (y.tensor(), OUT)))  # may still run while we register
        made["stamp"] = w.register(stamp_here)
        made["fill"] = w.register(ChipCallable.from_source(CHIP_SOURCES / "late_kernels.cpp", "late.fill"))
        o.submit_sub(made["stamp"], args((s.tensor(), OUT), scalars=(5,)))
        o.submit_next_level(made["fill"], args((z.tensor(), OUT), scalars=(f32_bits(9.0),)), worker=0)

    w.run(orch)
    assert np.array_equal(y.array(), [2.0] * 4)
    assert list(s.array()) == [w.child_pids()[1], 1005]
    assert np.array_equal(z.array(), [9.0] * 4)


def test_register_from_another_thread_while_a_run_waits_on_a_busy_sub_worker(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=2)
    closing(w)
    gate = w.register("test_register_late:wait_for_file")
    w.init()
    started, opened = tmp_path / "started", tmp_path / "open"
    path = dir_tensor(w, tmp_path)
    got = {}

    def register_meanwhile():
        try:
            while not started.exists():  # the gated task runs on one sub-worker now
                time.sleep(0.005)
            threading.Thread(target=opened.touch).start()  # opens the gate, before or after the install queues
            got["handle"] = w.register(stamp_here)
        except BaseException as e:  # noqa: BLE001 - reported by the test thread
            got["error"] = e

    t = threading.Thread(target=register_meanwhile)
    t.start()
    w.run(lambda o, _a, _c: o.submit_sub(gate, args((path.tensor(), IN))))
    t.join(60)
    assert not t.is_alive() and "error" not in got, got.get("error")
    assert run_on_every_sub_worker(w, got["handle"], 3) == {(p, 1003) for p in sub_pids(w)}


def test_close_while_a_register_waits_for_a_busy_child_ends_the_register(tmp_path, closing):
    w = Worker(level=3, num_sub_workers=1)
    closing(w)
    gate = w.register(wait_for_file)
    w.config.close_grace = 0.2  # the gated task never ends by itself: close() kills it soon
    w.init()
    started = tmp_path / "started"
    path = dir_tensor(w, tmp_path)
    outcome = {}

    def run():
        try:
            w.run(lambda o, _a, _c: o.submit_sub(gate, args((path.tensor(), IN))))
        except RuntimeError as e:
            outcome["run"] = e

    def register():
        try:
            w.register(stamp_here)  # its one sub-worker is busy until close()
        except RuntimeError as e:
            outcome["register"] = e

    runner = threading.Thread(target=run)
    runner.start()
    while not started.exists():
        time.sleep(0.005)
    registrar = threading.Thread(target=register)
    registrar.start()
    w.close()
    runner.join(30)
    registrar.join(30)
    assert not runner.is_alive() and not registrar.is_alive()
    assert "closed" in str(outcome["register"]), outcome
    assert "closed while the run waited" in str(outcome["run"])


def dir_tensor(w, tmp_path):
    """A UINT8 shared tensor holding tmp_path NUL-terminated (wait_for_file's argument)."""
    t = w.alloc_shared_tensor((256,), DataType.UINT8)
    t.array()[:] = 0
    raw = str(tmp_path).encode()
    t.array()[: len(raw)] = np.frombuffer(raw, np.uint8)
    return t


def wait_for_file(args_):
    """Marks <dir>/started, then waits (at most 30 s) for <dir>/open; <dir> is args[0] NUL-terminated."""
    where = bytes(args_.array(0)).split(b"\0")[0].decode()
    open(os.path.join(where, "started"), "w").close()
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(where, "open")):
        if time.monotonic() > deadline:
            raise TimeoutError("the gate never opened")
        time.sleep(0.002)


def test_register_after_init_is_refused_on_a_level_4_worker_and_after_close(closing):
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1))
    closing(w4)
    w4.init()
    with pytest.raises(RuntimeError, match=r"level-4 Worker.*register before init"):
        w4.register(ChipCallable("std.noop"))
    w = Worker(level=3, num_sub_workers=1)
    w.init()
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.register(stamp_here)
