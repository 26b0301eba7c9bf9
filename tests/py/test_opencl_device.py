"""Chips on OpenCL devices, as a Worker option: device="opencl" finds the
machine's devices at init() (asked in a throwaway child, so the Worker's own
process never opens OpenCL), and a missing loader, platform or device is a
clear error there, naming what was looked for and where, with nothing left
running. The standard set runs there: the README example, the demo, a strided
block, device memory through copies; a C++ kernel and a communication domain
are refused saying why."""

import os
import re
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from opencl_helpers import require_opencl
from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker, _core
from worker_helpers import closing, descendants, kernel_callable, time_bound  # noqa: F401

README = Path(__file__).resolve().parents[2] / "README.md"
CHIP_SOURCES = Path(__file__).resolve().parent / "chip_sources"


def test_find_devices_lists_the_machines_opencl_devices_with_their_facts():
    require_opencl()
    found = _core.find_devices(_core.DeviceKind.OPENCL)
    assert found, "no device listed"
    for d in found:
        assert d.kind == _core.DeviceKind.OPENCL
        assert d.platform and d.name
        assert d.memory_bytes > 0 and d.compute_units > 0
        assert d.concurrent_kernels == 1  # one in-order queue: orchestrations tile for one core
    assert descendants(os.getpid()) == [], "the probe child outlived the call"


def test_a_worker_with_opencl_chips_starts_and_closes(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl")
    closing(w)
    w.init()
    assert w.config.chip_lane.chip.device.kind == _core.DeviceKind.OPENCL
    assert len([p for p in w.child_pids() if p > 0]) == 2


def test_a_platform_nothing_matches_is_refused_at_init_naming_those_found(closing):
    require_opencl()
    platform = _core.find_devices(_core.DeviceKind.OPENCL)[0].platform
    w = Worker(level=3, num_chips=1, device="opencl", device_platform="no such platform")
    closing(w)
    with pytest.raises(RuntimeError) as e:
        w.init()
    assert str(e.value) == (
        f"Worker.init: chips on opencl devices: OpenCL: no platform's name contains "
        f"'no such platform' (found '{platform}')"
    )
    assert descendants(os.getpid()) == []


def _init_error(env: dict) -> str:
    """Worker(device="opencl").init()'s RuntimeError text in a fresh interpreter with `env` added."""
    code = textwrap.dedent("""
        from simpler import Worker
        w = Worker(level=3, num_chips=1, device="opencl")
        try:
            w.init()
        except RuntimeError as e:
            print(e)
        else:
            print("no error")
        w.close()
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_no_platform_is_refused_at_init_naming_where_drivers_were_looked_for(tmp_path):
    require_opencl()
    message = _init_error({"OCL_ICD_VENDORS": str(tmp_path)})
    assert message.startswith(
        "Worker.init: chips on opencl devices: OpenCL: the ICD loader libOpenCL.so.1 found no platform"
    ), message
    assert f"it reads the drivers listed in OCL_ICD_VENDORS={tmp_path}" in message, message
    assert "pocl-opencl-icd" in message, message


def test_no_loader_is_refused_at_init_naming_the_library_and_what_to_install(tmp_path):
    missing = tmp_path / "libOpenCL.so.1"
    message = _init_error({"SIMPLER_OPENCL_LIBRARY": str(missing)})
    if not _core.opencl_built():
        assert "this build of simpler drives no OpenCL devices" in message, message
        return
    assert message.startswith(f"Worker.init: chips on opencl devices: OpenCL: cannot load the ICD loader {missing}"), (
        message
    )
    assert "as SIMPLER_OPENCL_LIBRARY asked" in message and "ocl-icd-libopencl1" in message, message


def test_a_device_option_that_is_not_a_device_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match=r"^Worker.device: 'metal' is not one of 'simulated', 'opencl', 'cuda'$"):
        Worker(level=3, num_chips=1, device="metal")
    with pytest.raises(TypeError, match=r"^Worker.device: expected str \(got int 3\) \(device=3\)$"):
        Worker(level=3, num_chips=1, device=3)
    with pytest.raises(TypeError, match=r"^Worker.device_platform: expected str"):
        Worker(level=3, num_chips=1, device="opencl", device_platform=b"pocl")


def test_simulated_chips_need_no_opencl_at_all(closing):
    # The default device opens nothing: no probe, whatever OpenCL the machine has.
    w = Worker(level=3, num_chips=1, device="simulated")
    closing(w)
    w.init()
    assert w.config.chip_lane.chip.device.kind == _core.DeviceKind.SIMULATED


IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT_EXISTING


def _doubles(vadd, a, out, chip: int):
    """An orchestration: out = a + a, one std.vector_add task on `chip`."""

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        for t, tag in ((a, IN), (a, IN), (out, OUT)):
            ta.add_tensor(t.tensor(), tag)
        o.submit_next_level(vadd, ta, worker=chip)

    return orch


def _vadd_worker(closing, num_chips: int):
    """A started Worker of `num_chips` OpenCL chips with std.vector_add registered and two
    8-element FLOAT32 shared tensors (a, out) for _doubles: (w, vadd, a, out)."""
    require_opencl()
    w = Worker(level=3, num_chips=num_chips, device="opencl")
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    a, out = (w.alloc_shared_tensor((8,), DataType.FLOAT32) for _ in range(2))
    w.init()
    return w, vadd, a, out


def test_the_readme_example_runs_on_opencl_chips():
    require_opencl()
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text[text.index("## Example") :], re.S).group(1)
    assert "Worker(level=3, num_chips=2, num_sub_workers=1)" in code
    code = code.replace(
        "Worker(level=3, num_chips=2, num_sub_workers=1)",
        'Worker(level=3, num_chips=2, num_sub_workers=1, device="opencl")',
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("levels", ["3", "4"])
def test_the_demo_runs_on_opencl_chips(levels):
    require_opencl()
    result = subprocess.run(
        [sys.executable, "-m", "simpler", "demo", "--levels", levels, "--device", "opencl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "C matches NumPy: True" in result.stdout, result.stdout


def test_a_strided_column_block_written_on_an_opencl_chip_changes_exactly_its_bytes(closing):
    require_opencl()
    w = Worker(level=3, num_chips=1, device="opencl")
    closing(w)
    add = w.register(ChipCallable("std.add_scalar"))
    rows, cols = 24, 20
    m = w.alloc_shared_tensor((rows, cols), DataType.FLOAT32)
    x = w.alloc_shared_tensor((8, 7), DataType.FLOAT32)
    w.init()
    before = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    m.array()[...] = before
    x.array()[...] = np.arange(56, dtype=np.float32).reshape(8, 7) * -2
    block = (slice(3, 19, 2), slice(5, 12))  # every other row of 16, 7 columns: a strided 2-D view

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(x.tensor(), IN)
        ta.add_tensor(m.tensor((8, 7), strides=(2 * cols, 1), byte_offset=4 * (3 * cols + 5)), OUT)
        ta.add_scalar(struct.unpack("<I", struct.pack("<f", 0.5))[0])
        o.submit_next_level(add, ta, worker=0)

    w.run(orch)
    expected = before.copy()
    expected[block] = x.array() + 0.5
    assert np.array_equal(m.array(), expected)


def test_device_memory_on_an_opencl_chip_round_trips_through_copies(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl")
    closing(w)
    vadd = w.register(ChipCallable("std.vector_add"))
    src = w.alloc_shared_tensor((256,), DataType.FLOAT32)
    dst = w.alloc_shared_tensor((256,), DataType.FLOAT32)
    w.init()
    src.array()[:] = np.linspace(-3, 3, 256, dtype=np.float32)

    def orch(o, _args, _cfg):
        d = o.alloc_child_tensor(1, (256,), DataType.FLOAT32).tensor()
        e = o.alloc_child_tensor(1, (256,), DataType.FLOAT32).tensor()
        o.copy_to(d, src.tensor())
        ta = TaskArgs()
        for t, tag in ((d, IN), (d, IN), (e, OUT)):
            ta.add_tensor(t, tag)
        o.submit_next_level(vadd, ta, worker=1)  # e = d + d, on the device
        o.copy_from(dst.tensor(), e)

    w.run(orch)
    assert np.array_equal(dst.array(), 2 * src.array())


def test_a_cpp_kernel_on_an_opencl_chip_fails_naming_the_kernel_and_the_device(closing):
    require_opencl()
    w = Worker(level=3, num_chips=1, device="opencl")
    closing(w)
    overrun = w.register(kernel_callable("test.overrun"))  # its kernel has a C++ form only
    buf = w.alloc_shared_tensor((16,), DataType.FLOAT32)
    w.init()
    device = _core.find_devices(_core.DeviceKind.OPENCL)[0].name

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(buf.tensor(), OUT)
        ta.add_scalar(0)
        o.submit_next_level(overrun, ta, worker=0)

    with pytest.raises(
        RuntimeError, match=rf"kernel 'test.overrun' has no OpenCL form on device '{re.escape(device)}'"
    ):
        w.run(orch)


def test_communication_domains_are_refused_on_opencl_chips_saying_why(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl")
    closing(w)
    w.init()

    def orch(o, _args, _cfg):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": 1024}):
            pass

    with pytest.raises(
        ValueError,
        match=r"allocate_domain 'tp': this Worker's chips drive opencl devices, whose "
        r"kernels reach only their own device memory",
    ):
        w.run(orch)


def test_global_domains_over_opencl_level_3_children_are_refused_saying_which_child(closing):
    require_opencl()
    w4 = Worker(level=4)
    w4.add_worker(Worker(level=3, num_chips=1))
    w4.add_worker(Worker(level=3, num_chips=1, device="opencl"))
    closing(w4)
    w4.init()

    def orch(o, _args, _cfg):
        with o.allocate_global_domain("dp", members=[(0, 0), (1, 0)], window_size=4096, buffers={"x": 1024}):
            pass

    with pytest.raises(
        ValueError,
        match=r"^allocate_global_domain 'dp': members\[1\]: L3\[1\]'s chips drive opencl "
        r"devices, whose kernels reach only their own device memory",
    ):
        w4.run(orch)
    w4.run(lambda o, _a, _c: None)  # the Worker goes on


def test_an_l4_tree_runs_an_opencl_kernel_on_the_chips_of_each_level_3_child(closing):
    require_opencl()
    n = 1000
    w4 = Worker(level=4)
    for _ in range(2):
        w4.add_worker(Worker(level=3, num_chips=1, device="opencl"))
    closing(w4)
    # An OpenCL C kernel runs on OpenCL chips only: its result shows the L3s' chips drive OpenCL devices.
    saxpy = w4.register(ChipCallable.from_opencl(SAXPY, "saxpy"))

    def l3(o, args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(args[0], IN)
        ta.add_tensor(args[1], TensorArgType.INOUT)
        ta.add_scalar(_f32_scalar(2.0))
        o.submit_next_level(saxpy, ta, worker=0)

    on_l3 = w4.register(l3)
    w4.init()
    x = w4.alloc_shared_tensor((2 * n,), DataType.FLOAT32)
    y = w4.alloc_shared_tensor((2 * n,), DataType.FLOAT32)
    x.array()[...] = np.arange(2 * n, dtype=np.float32)
    y.array()[...] = 1.0

    def orch(o, _args, _cfg):
        for i in range(2):  # half i on L3[i]
            ta = TaskArgs()
            ta.add_tensor(x.tensor((n,), DataType.FLOAT32, None, i * n * 4), IN)
            ta.add_tensor(y.tensor((n,), DataType.FLOAT32, None, i * n * 4), TensorArgType.INOUT)
            o.submit_next_level(on_l3, ta, worker=i)

    w4.run(orch)
    assert np.array_equal(y.array(), 1.0 + 2.0 * np.arange(2 * n, dtype=np.float32))


def test_simpler_device_sets_the_default_device(monkeypatch):
    monkeypatch.setenv("SIMPLER_DEVICE", "opencl")
    assert Worker(level=3, num_chips=1).config.chip_lane.chip.device.kind == _core.DeviceKind.OPENCL
    assert (
        Worker(level=3, num_chips=1, device="simulated").config.chip_lane.chip.device.kind == _core.DeviceKind.SIMULATED
    )
    monkeypatch.setenv("SIMPLER_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"^SIMPLER_DEVICE='tpu' \(the default of Worker.device\) is not one of "):
        Worker(level=3, num_chips=1)


SAXPY = r"""
__kernel void saxpy(__global const float* x, const simpler_view vx, __global float* y, const simpler_view vy,
                    const ulong a) {
    const ulong i = get_global_id(0);
    if (i < simpler_count(vy)) y[simpler_at(vy, i)] += as_float((uint)a) * x[simpler_at(vx, i)];
}
"""


def _f32_scalar(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _axpy(handle, x, y, a: float, chip: int):
    """An orchestration: one task of `handle` on `chip` with x (INPUT view), y (INOUT view) and the f32 scalar a."""

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(x, IN)
        ta.add_tensor(y, TensorArgType.INOUT)
        ta.add_scalar(_f32_scalar(a))
        o.submit_next_level(handle, ta, worker=chip)

    return orch


def test_an_opencl_c_kernel_of_the_users_runs_on_strided_views(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl")
    closing(w)
    saxpy = w.register(ChipCallable.from_opencl(SAXPY, "saxpy"))
    x = w.alloc_shared_tensor((6, 5), DataType.FLOAT32)
    y = w.alloc_shared_tensor((12, 9), DataType.FLOAT32)
    w.init()
    x.array()[...] = np.arange(30, dtype=np.float32).reshape(6, 5)
    y.array()[...] = 1.0
    block = (slice(1, 12, 2), slice(2, 7))  # every other row, 5 columns of y
    w.run(_axpy(saxpy, x.tensor(), y.tensor((6, 5), strides=(18, 1), byte_offset=4 * (9 + 2)), 3.0, chip=1))
    expected = np.ones((12, 9), dtype=np.float32)
    expected[block] += 3.0 * x.array()
    assert np.array_equal(y.array(), expected)


def test_from_opencl_reads_a_file_and_refuses_a_kernel_it_does_not_define(tmp_path):
    path = tmp_path / "saxpy.cl"
    path.write_text(SAXPY)
    c = ChipCallable.from_opencl(path, "saxpy")
    assert c.orchestration == "opencl:saxpy" and c.library == str(path)
    assert ChipCallable.from_opencl(str(path), "saxpy") == c
    with pytest.raises(ValueError, match=r"defines no __kernel 'axpy' \(it defines: saxpy\)"):
        ChipCallable.from_opencl(path, "axpy")
    with pytest.raises(ValueError, match=r"no OpenCL source at"):
        ChipCallable.from_opencl(tmp_path / "missing.cl", "saxpy")
    text = ChipCallable.from_opencl(SAXPY, "saxpy")
    assert text.library.endswith(".cl") and open(text.library).read() == SAXPY


def test_a_kernel_that_does_not_build_is_refused_at_register_with_the_build_log(closing):
    w, vadd, a, out = _vadd_worker(closing, 1)
    broken = ChipCallable.from_opencl("__kernel void broken(__global float* x) { x[0] = no_such_name; }", "broken")
    with pytest.raises(RuntimeError) as e:
        w.register(broken)
    text = str(e.value)
    assert "'opencl:broken' could not be installed on 1 child" in text, text
    assert "does not build on device" in text and "CL_BUILD_PROGRAM_FAILURE" in text and "no_such_name" in text, text
    a.array()[:] = 2.0
    w.run(_doubles(vadd, a, out, chip=0))  # the Worker and its other callables are as they were
    assert np.array_equal(out.array(), np.full(8, 4.0, dtype=np.float32))


def test_a_kernel_registered_before_init_that_does_not_build_fails_its_tasks_with_the_log(closing):
    require_opencl()
    w = Worker(level=3, num_chips=1, device="opencl")
    closing(w)
    broken = w.register(
        ChipCallable.from_opencl("__kernel void broken2(__global float* x) { x[0] = nope2; }", "broken2")
    )
    a = w.alloc_shared_tensor((8,), DataType.FLOAT32)
    w.init()

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(a.tensor(), TensorArgType.INOUT)
        o.submit_next_level(broken, ta, worker=0)

    with pytest.raises(RuntimeError, match=r"(?s)was not installed on this chip: 'opencl:broken2': OpenCL: .*nope2"):
        w.run(orch)


def test_an_opencl_c_kernel_on_a_simulated_chip_fails_saying_where_it_runs(closing):
    w = Worker(level=3, num_chips=1)
    closing(w)
    saxpy = w.register(ChipCallable.from_opencl(SAXPY, "saxpy"))
    x, y = (w.alloc_shared_tensor((8,), DataType.FLOAT32) for _ in range(2))
    w.init()

    with pytest.raises(
        RuntimeError,
        match=r"kernel 'saxpy' \(task \d+\) failed: it is OpenCL C, which runs on OpenCL "
        r"chips only",
    ):
        w.run(_axpy(saxpy, x.tensor(), y.tensor(), 1.0, chip=0))


def test_a_cpp_orchestration_launches_an_opencl_kernel_by_name(closing):
    require_opencl()
    w = Worker(level=3, num_chips=1, device="opencl")
    closing(w)
    w.register(ChipCallable.from_opencl(SAXPY, "saxpy"))  # loads the source on the chip
    halves = w.register(ChipCallable.from_source(str(CHIP_SOURCES / "opencl_orchestration.cpp"), "ocl.saxpy_halves"))
    x, y = (w.alloc_shared_tensor((10, 4), DataType.FLOAT32) for _ in range(2))
    w.init()
    x.array()[...] = np.arange(40, dtype=np.float32).reshape(10, 4)
    y.array()[...] = -1.0

    w.run(_axpy(halves, x.tensor(), y.tensor(), 0.5, chip=0))
    assert np.array_equal(y.array(), -1.0 + 0.5 * x.array())


HANG = r"""
__kernel void hang(__global volatile int* flag, const simpler_view v) {
    while (flag[simpler_at(v, 0)] == 0) { }
}
"""


def test_an_opencl_kernel_past_its_deadline_is_killed_and_reported_and_the_other_chip_serves(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl", task_timeout=1)
    closing(w)
    hang = w.register(ChipCallable.from_opencl(HANG, "hang"))
    vadd = w.register(ChipCallable("std.vector_add"))
    flag = w.alloc_shared_tensor((1,), DataType.INT32)
    a, out = (w.alloc_shared_tensor((8,), DataType.FLOAT32) for _ in range(2))
    w.init()

    def stuck(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(flag.tensor(), IN)
        o.submit_next_level(hang, ta, worker=0)

    with pytest.raises(RuntimeError) as e:
        w.run(stuck)
    msg = str(e.value)
    assert "(callable 'opencl:hang', member 0) on chip 0" in msg and "TIMED_OUT" in msg, msg
    assert w.child_status()[0].lost, w.child_status()
    a.array()[:] = 1.5
    w.run(_doubles(vadd, a, out, chip=1))
    assert np.array_equal(out.array(), np.full(8, 3.0, dtype=np.float32))


def test_a_killed_opencl_chip_is_reported_lost_and_the_other_chip_serves(closing):
    w, vadd, a, out = _vadd_worker(closing, 2)
    os.kill(w.child_pids()[0], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not w.child_status()[0].lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.child_status()[0].lost and "signal 9" in w.child_status()[0].why, w.child_status()
    a.array()[:] = 2.0
    with pytest.raises(ValueError, match=r"worker=0 is lost \(chip 0"):
        w.run(_doubles(vadd, a, out, chip=0))
    w.run(_doubles(vadd, a, out, chip=1))
    assert np.array_equal(out.array(), np.full(8, 4.0, dtype=np.float32))
