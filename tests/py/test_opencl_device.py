"""Chips on OpenCL devices, as a Worker option: device="opencl" finds the
machine's devices at init() (asked in a throwaway child, so the Worker's own
process never opens OpenCL), and a missing loader, platform or device is a
clear error there, naming what was looked for and where, with nothing left
running. The standard set runs there: the README example, the demo, a strided
block, device memory through copies; a C++ kernel and a communication domain
are refused saying why."""

import os
import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from opencl_helpers import require_opencl
from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker, _core
from worker_helpers import closing, descendants, kernel_callable, time_bound  # noqa: F401

README = Path(__file__).resolve().parents[2] / "README.md"


def test_find_devices_lists_the_machines_opencl_devices_with_their_facts():
    require_opencl()
    found = _core.find_devices(_core.DeviceKind.OPENCL)
    assert found, "no device listed"
    for d in found:
        assert d.kind == _core.DeviceKind.OPENCL
        assert d.platform and d.name
        assert d.memory_bytes > 0 and d.compute_units > 0
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
    assert str(e.value) == (f"Worker.init: chips on opencl devices: OpenCL: no platform's name contains "
                            f"'no such platform' (found '{platform}')")
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
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_no_platform_is_refused_at_init_naming_where_drivers_were_looked_for(tmp_path):
    require_opencl()
    message = _init_error({"OCL_ICD_VENDORS": str(tmp_path)})
    assert message.startswith("Worker.init: chips on opencl devices: OpenCL: the ICD loader libOpenCL.so.1 found no "
                              "platform"), message
    assert f"it reads the drivers listed in OCL_ICD_VENDORS={tmp_path}" in message, message
    assert "pocl-opencl-icd" in message, message


def test_no_loader_is_refused_at_init_naming_the_library_and_what_to_install(tmp_path):
    missing = tmp_path / "libOpenCL.so.1"
    message = _init_error({"SIMPLER_OPENCL_LIBRARY": str(missing)})
    if not _core.opencl_built():
        assert "this build of simpler drives no OpenCL devices" in message, message
        return
    assert message.startswith(f"Worker.init: chips on opencl devices: OpenCL: cannot load the ICD loader {missing}"), \
        message
    assert "as SIMPLER_OPENCL_LIBRARY asked" in message and "ocl-icd-libopencl1" in message, message


def test_a_device_option_that_is_not_a_device_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match=r"^Worker.device: 'cuda' is not one of 'simulated', 'opencl'$"):
        Worker(level=3, num_chips=1, device="cuda")
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


def test_the_readme_example_runs_on_opencl_chips():
    require_opencl()
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text[text.index("## Example"):], re.S).group(1)
    assert "Worker(level=3, num_chips=2, num_sub_workers=1)" in code
    code = code.replace("Worker(level=3, num_chips=2, num_sub_workers=1)",
                        'Worker(level=3, num_chips=2, num_sub_workers=1, device="opencl")')
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("levels", ["3", "4"])
def test_the_demo_runs_on_opencl_chips(levels):
    require_opencl()
    result = subprocess.run([sys.executable, "-m", "simpler", "demo", "--levels", levels, "--device", "opencl"],
                            capture_output=True, text=True, timeout=120)
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
        o.submit_next_level(vadd, ta, worker=1)   # e = d + d, on the device
        o.copy_from(dst.tensor(), e)

    w.run(orch)
    assert np.array_equal(dst.array(), 2 * src.array())


def test_a_cpp_kernel_on_an_opencl_chip_fails_naming_the_kernel_and_the_device(closing):
    require_opencl()
    w = Worker(level=3, num_chips=1, device="opencl")
    closing(w)
    stamp = w.register(kernel_callable("test.stamp"))
    buf = w.alloc_shared_tensor((16,), DataType.FLOAT32)
    w.init()
    device = _core.find_devices(_core.DeviceKind.OPENCL)[0].name

    def orch(o, _args, _cfg):
        ta = TaskArgs()
        ta.add_tensor(buf.tensor(), OUT)
        o.submit_next_level(stamp, ta, worker=0)

    with pytest.raises(RuntimeError, match=rf"kernel 'test.stamp' has no OpenCL form on device '{re.escape(device)}'"):
        w.run(orch)


def test_communication_domains_are_refused_on_opencl_chips_saying_why(closing):
    require_opencl()
    w = Worker(level=3, num_chips=2, device="opencl")
    closing(w)
    w.init()

    def orch(o, _args, _cfg):
        with o.allocate_domain("tp", workers=[0, 1], window_size=4096, buffers={"x": 1024}):
            pass

    with pytest.raises(ValueError, match=r"allocate_domain 'tp': this Worker's chips drive opencl devices, whose "
                                         r"kernels reach only their own device memory"):
        w.run(orch)


def test_simpler_device_sets_the_default_device(monkeypatch):
    monkeypatch.setenv("SIMPLER_DEVICE", "opencl")
    assert Worker(level=3, num_chips=1).config.chip_lane.chip.device.kind == _core.DeviceKind.OPENCL
    assert Worker(level=3, num_chips=1, device="simulated").config.chip_lane.chip.device.kind == \
        _core.DeviceKind.SIMULATED
    monkeypatch.setenv("SIMPLER_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"^SIMPLER_DEVICE='tpu' \(the default of Worker.device\) is not one of "):
        Worker(level=3, num_chips=1)
