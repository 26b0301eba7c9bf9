"""device="cuda" is known everywhere a device is named — Worker(device=...), SIMPLER_DEVICE,
DeviceKind, find_devices, `python -m simpler devices` — and the CUDA devices are found through the
driver: the test driver library (tests/cpp/cuda_test_driver.cpp, compiled here) stands in for
libcuda.so.1, and the devices command lists its devices (name, UUID, the driver's version, memory,
multiprocessors) and the NVRTC CUDA chips compile with, or why there is none. init() refuses CUDA
chips, which this version does not run, saying so or what the machine lacks (no driver library where
SIMPLER_CUDA_LIBRARY points), leaving no child behind; and refuses to fork CUDA chips from a process
that has already loaded the driver (CUDA does not survive fork)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simpler import DeviceKind, Worker
from simpler._core import cuda_built, find_devices, nvrtc_version
from simpler.runtime_libraries import wheel_nvrtc_path
from worker_helpers import closing  # noqa: F401

NO_CHIPS = (
    "CUDA: this version of simpler finds CUDA devices (python -m simpler devices lists them) but runs no chip on "
    "one yet"
)
TEST_DRIVER_SOURCE = Path(__file__).resolve().parents[1] / "cpp" / "cuda_test_driver.cpp"

pytestmark = pytest.mark.skipif(not cuda_built(), reason="this build found no CUDA headers (./dev installs them)")


@pytest.fixture(scope="module")
def test_driver(tmp_path_factory):
    """The test CUDA driver library, compiled from its source."""
    out = tmp_path_factory.mktemp("cuda") / "libcuda_test.so"
    cxx = os.environ.get("CXX", "c++")
    subprocess.run([cxx, "-std=c++20", "-shared", "-fPIC", "-O1", str(TEST_DRIVER_SOURCE), "-o", str(out)], check=True)
    return out


def devices_command(**env: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "simpler", "devices"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout


def test_the_kind_is_named_and_the_devices_are_found_through_the_driver(test_driver, monkeypatch):
    assert DeviceKind.CUDA.name == "CUDA"
    monkeypatch.setenv("SIMPLER_CUDA_LIBRARY", str(test_driver))
    found = find_devices(DeviceKind.CUDA)
    assert [(d.kind, d.name, d.memory_bytes, d.compute_units) for d in found] == [
        (DeviceKind.CUDA, "simpler test GPU 0", 1 << 30, 132),
        (DeviceKind.CUDA, "simpler test GPU 1", 2 << 30, 132),
    ]
    assert found[1].uuid == "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"
    assert found[0].version == "CUDA 13.0 driver, compute capability 9.0"
    by_uuid = find_devices(DeviceKind.CUDA, "GPU-1011")
    assert [d.name for d in by_uuid] == ["simpler test GPU 1"]
    with pytest.raises(RuntimeError, match="no device's name contains, nor its UUID begins with, 'H200'"):
        find_devices(DeviceKind.CUDA, "H200")


def test_init_of_cuda_chips_says_the_missing_driver(tmp_path, monkeypatch, closing):
    missing = tmp_path / "libcuda.so.1"
    monkeypatch.setenv("SIMPLER_CUDA_LIBRARY", str(missing))
    w = Worker(level=3, num_chips=2, device="cuda")
    closing(w)
    assert w.config.chip_lane.chip.device.kind == DeviceKind.CUDA
    with pytest.raises(RuntimeError) as e:
        w.init()
    text = str(e.value)
    assert text.startswith(f"Worker.init: chips on cuda devices: no CUDA driver: cannot load {missing}"), text
    assert "as SIMPLER_CUDA_LIBRARY asked" in text and "comes with the NVIDIA driver" in text, text


def test_init_of_cuda_chips_with_a_driver_says_no_chip_runs_on_one(test_driver, monkeypatch, closing):
    monkeypatch.setenv("SIMPLER_CUDA_LIBRARY", str(test_driver))
    w = Worker(level=3, num_chips=2, device="cuda", device_platform="GPU 1")
    closing(w)
    with pytest.raises(RuntimeError) as e:
        w.init()
    assert str(e.value).startswith(f"Worker.init: chips on cuda devices: {NO_CHIPS}"), str(e.value)


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


def test_the_devices_command_lists_the_cuda_devices_and_nvrtc(test_driver):
    text = devices_command(SIMPLER_CUDA_LIBRARY=str(test_driver))
    cuda = text[text.index("cuda: ") :].splitlines()
    assert cuda[0].startswith('cuda: 2 devices, in the order Worker(device="cuda") will give them to chips'), text
    assert cuda[1:8] == [
        "  device 0: simpler test GPU 0",
        "    platform:       NVIDIA CUDA",
        "    uuid:           GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
        "    version:        CUDA 13.0 driver, compute capability 9.0",
        "    memory:         1.0 GiB (1073741824 bytes)",
        "    compute units:  132 (multiprocessors)",
        "    host memory:    separate (every run stages host arguments)",
    ], text
    major, minor = nvrtc_version()
    assert cuda[-1] == f"  nvrtc: {major}.{minor} (compiles the kernels of CUDA chips)", text


def test_the_devices_command_says_what_is_missing(tmp_path, test_driver):
    missing = tmp_path / "libcuda.so.1"
    lines = devices_command(SIMPLER_CUDA_LIBRARY=str(missing)).splitlines()
    cuda = [line for line in lines if line.startswith("cuda: ")]
    assert len(cuda) == 1 and cuda[0].startswith(f"cuda: none. no CUDA driver: cannot load {missing}"), lines
    no_nvrtc = tmp_path / "libnvrtc.so.13"
    text = devices_command(SIMPLER_CUDA_LIBRARY=str(test_driver), SIMPLER_NVRTC_LIBRARY=str(no_nvrtc))
    nvrtc = [line for line in text.splitlines() if line.startswith("  nvrtc: ")]
    assert nvrtc[0].startswith("  nvrtc: none. no NVRTC (CUDA's run-time compiler, which builds the kernels"), text
    assert f"cannot load {no_nvrtc}" in nvrtc[0], text
    assert "pip install nvidia-cuda-nvrtc" in text, text


def test_the_package_finds_the_nvrtc_wheel():
    # ./dev installs nvidia-cuda-nvrtc; the package registers its library at import.
    path = wheel_nvrtc_path()
    assert path is not None and path.name == "libnvrtc.so.13" and path.is_file()
    if "SIMPLER_NVRTC_LIBRARY" not in os.environ:
        assert nvrtc_version()[0] == 13
