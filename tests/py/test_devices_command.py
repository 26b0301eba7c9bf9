"""`python -m simpler devices`: lists the OpenCL devices Worker(device="opencl")
would take, with the facts find_devices gives, in the same order, then says why
there is no CUDA device (no driver library where it was told to look); with no
OpenCL device (an empty driver folder, a platform filter nothing matches) it
says why and what to install, and exits 1. Each run is a fresh interpreter."""

import os
import subprocess
import sys

from opencl_helpers import require_opencl
from simpler import _core


def _devices(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "simpler", "devices", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_lists_every_opencl_device_with_its_facts_in_the_order_chips_take_them():
    require_opencl()
    found = _core.find_devices(_core.DeviceKind.OPENCL)
    # No CUDA driver, on a GPU machine too (test_cuda_device_kind.py lists CUDA devices).
    out = _devices(env={"SIMPLER_CUDA_LIBRARY": "/nonexistent/libcuda.so.1"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    assert lines[0].startswith("simulated: always available")
    plural = "s" if len(found) != 1 else ""
    assert lines[1].startswith(f"opencl: {len(found)} device{plural} on "), lines[1]
    assert f"chip i takes device i modulo {len(found)}" in lines[1]
    # Six lines a device, in find_devices' order, then CUDA's line.
    assert len(lines) == 3 + 6 * len(found), out.stdout
    assert lines[-1].startswith("cuda: none. no CUDA driver: cannot load /nonexistent/libcuda.so.1"), lines[-1]
    for i, d in enumerate(found):
        block = lines[2 + 6 * i : 8 + 6 * i]
        assert block[0] == f"  device {i}: {d.name}"
        assert block[1] == f"    platform:       {d.platform}"
        assert d.version.startswith("OpenCL ") and block[2] == f"    version:        {d.version}"
        assert block[3].endswith(f"({d.memory_bytes} bytes)") and d.memory_bytes > 0
        assert block[4] == f"    compute units:  {d.compute_units}" and d.compute_units > 0
        assert block[5].startswith("    host memory:    " + ("shared" if d.unified_host_memory else "separate"))


def test_the_platform_filter_picks_platforms_as_the_worker_option_does():
    require_opencl()
    platform = _core.find_devices(_core.DeviceKind.OPENCL)[0].platform
    out = _devices("--platform", platform.upper())
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"    platform:       {platform}" in out.stdout.splitlines()
    none = _devices("--platform", "no such platform")
    assert none.returncode == 1
    assert (
        f"opencl: none found. OpenCL: no platform's name contains 'no such platform' (found '{platform}')"
        in none.stdout
    ), none.stdout


def test_with_no_driver_it_says_where_it_looked_and_what_to_install(tmp_path):
    out = _devices(env={"OCL_ICD_VENDORS": str(tmp_path)})
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("simulated: always available")
    assert lines[1].startswith("opencl: none found. OpenCL: "), lines[1]
    if _core.opencl_built():
        assert "found no platform" in lines[1] and f"OCL_ICD_VENDORS={tmp_path}" in lines[1], lines[1]
    assert lines[2].startswith("To drive a device, install an OpenCL ICD loader and a driver for it.")
    assert "ocl-icd-libopencl1" in lines[2] and "pocl-opencl-icd" in lines[2]
    assert "Without one, chips run on the simulated device" in lines[2]


def test_a_loader_that_is_not_there_is_named(tmp_path):
    missing = tmp_path / "libOpenCL.so.1"
    out = _devices(env={"SIMPLER_OPENCL_LIBRARY": str(missing)})
    assert out.returncode == 1
    if _core.opencl_built():
        assert f"cannot load the ICD loader {missing}" in out.stdout, out.stdout
