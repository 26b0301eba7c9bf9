"""Chips on OpenCL devices, as a Worker option: device="opencl" finds the
machine's devices at init() (asked in a throwaway child, so the Worker's own
process never opens OpenCL), and a missing loader, platform or device is a
clear error there, naming what was looked for and where, with nothing left
running."""

import os
import subprocess
import sys
import textwrap

import pytest

from opencl_helpers import require_opencl
from simpler import Worker, _core
from worker_helpers import closing, descendants, time_bound  # noqa: F401


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
