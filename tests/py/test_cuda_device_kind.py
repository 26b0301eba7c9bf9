"""device="cuda" is known everywhere a device is named — Worker(device=...), SIMPLER_DEVICE,
DeviceKind, find_devices, `python -m simpler devices` — and this build, which drives no CUDA
device, says so at init() together with what else the machine lacks (no driver library where
SIMPLER_CUDA_LIBRARY points), leaving no child behind; and refuses to fork CUDA chips from a process
that has already loaded the driver (CUDA does not survive fork)."""

import os
import subprocess
import sys

import pytest

from simpler import DeviceKind, Worker
from simpler._core import cuda_built, find_devices
from worker_helpers import closing  # noqa: F401

NOT_BUILT = "CUDA: this build of simpler drives no CUDA devices"


def test_the_kind_is_named_and_this_build_drives_none():
    assert DeviceKind.CUDA.name == "CUDA"
    assert not cuda_built()
    with pytest.raises(RuntimeError, match=NOT_BUILT):
        find_devices(DeviceKind.CUDA)


def test_init_of_cuda_chips_says_the_build_and_the_missing_driver(tmp_path, monkeypatch, closing):
    missing = tmp_path / "libcuda.so.1"
    monkeypatch.setenv("SIMPLER_CUDA_LIBRARY", str(missing))
    w = Worker(level=3, num_chips=2, device="cuda")
    closing(w)
    assert w.config.chip_lane.chip.device.kind == DeviceKind.CUDA
    with pytest.raises(RuntimeError) as e:
        w.init()
    text = str(e.value)
    assert text.startswith(f"Worker.init: chips on cuda devices: {NOT_BUILT}"), text
    assert f"no CUDA driver: cannot load {missing}" in text, text
    assert "as SIMPLER_CUDA_LIBRARY asked" in text and "comes with the NVIDIA driver" in text, text


def test_init_refuses_cuda_chips_once_this_process_loaded_the_driver(monkeypatch, closing):
    # libm.so.6 stands for the driver: this interpreter has loaded it, as torch.cuda would libcuda.
    monkeypatch.setenv("SIMPLER_CUDA_LIBRARY", "libm.so.6")
    w = Worker(level=3, num_chips=1, device="cuda")
    closing(w)
    with pytest.raises(RuntimeError) as e:
        w.init()
    assert str(e.value) == (
        "Worker.init: chips on cuda devices: this process has already loaded the CUDA driver, and CUDA does not "
        "survive fork; create and init() the Worker before anything touches CUDA (torch.cuda, CuPy, ...)"
    )


def test_simpler_device_may_name_cuda(monkeypatch, closing):
    monkeypatch.setenv("SIMPLER_DEVICE", "cuda")
    w = Worker(level=3, num_chips=1)
    closing(w)
    assert w.config.chip_lane.chip.device.kind == DeviceKind.CUDA
    with pytest.raises(ValueError, match="'simulated', 'opencl', 'cuda'"):
        Worker(level=3, num_chips=1, device="gpu")


def test_the_devices_command_says_why_there_is_no_cuda_device(tmp_path):
    missing = tmp_path / "libcuda.so.1"
    out = subprocess.run(
        [sys.executable, "-m", "simpler", "devices"],
        env={**os.environ, "SIMPLER_CUDA_LIBRARY": str(missing)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    cuda = [line for line in out.stdout.splitlines() if line.startswith("cuda: ")]
    assert cuda == [cuda[0]] and cuda[0].startswith(f"cuda: none. {NOT_BUILT}"), out.stdout
    assert f"no CUDA driver: cannot load {missing}" in cuda[0]
