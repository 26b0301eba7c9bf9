"""Worker.device_facts(chip): what each chip itself opened, after init() — a
simulated chip its heap and core threads, an OpenCL chip the device the
machine's list (find_devices) gives at its index, with the driver's version
and whether kernels use host memory in place. Refused before init(), for a
chip that does not exist, on a level-4 Worker, and after close()."""

import pytest

from simpler import DeviceFacts, DeviceKind, Worker
from simpler._core import find_devices
from worker_helpers import closing, nested_tree  # noqa: F401


def test_a_simulated_chip_tells_its_heap_and_its_core_threads(closing):
    w = Worker(level=3, num_chips=2, device="simulated", chip_arena_bytes=1 << 22, chip_core_threads=3)
    closing(w)
    with pytest.raises(RuntimeError, match="init"):
        w.device_facts(0)
    w.init()
    for chip in (0, 1):
        f = w.device_facts(chip)
        assert isinstance(f, DeviceFacts)
        assert (f.kind, f.platform, f.version) == (DeviceKind.SIMULATED, "simpler", "")
        assert (f.memory_bytes, f.compute_units) == (1 << 22, 3), f
        assert isinstance(f.unified_host_memory, bool)
    with pytest.raises(IndexError, match=r"no chip 2 \(this Worker has 2 chips\)"):
        w.device_facts(2)
    with pytest.raises(ValueError, match="must be >= 0"):
        w.device_facts(-1)


def test_an_opencl_chip_tells_the_device_it_opened():
    try:
        listed = find_devices(DeviceKind.OPENCL)
    except RuntimeError as e:
        pytest.skip(f"no OpenCL device here: {e}")
    with Worker(level=3, num_chips=1, device="opencl") as w:
        w.init()
        f = w.device_facts(0)
        want = listed[0]
        assert f.kind == DeviceKind.OPENCL
        got_ = (f.platform, f.name, f.version, f.compute_units, f.unified_host_memory)
        assert got_ == (want.platform, want.name, want.version, want.compute_units, want.unified_host_memory)
        assert f.memory_bytes > 0 and f.version


def test_a_level_4_worker_sends_the_question_to_its_level_3_children(closing):
    w4 = nested_tree(closing, children=1, chips=1)
    w4.init()
    with pytest.raises(ValueError, match="level 4; devices belong to the chips of a level-3 Worker"):
        w4.device_facts(0)


def test_a_closed_worker_answers_nothing():
    w = Worker(level=3, num_chips=1)
    w.init()
    assert w.device_facts(0).kind == DeviceKind.SIMULATED
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.device_facts(0)
