"""Whether the OpenCL tests run: they need an OpenCL device (./dev installs
PoCL's CPU device). Without one they skip, unless SIMPLER_REQUIRE_OPENCL=1
(./dev test sets it), where a missing device fails them."""

import os

import pytest

from simpler import _core


def require_opencl() -> None:
    """Skips (or fails) the calling test when no OpenCL device is found."""
    try:
        _core.find_devices(_core.DeviceKind.OPENCL)
    except RuntimeError as e:
        if os.environ.get("SIMPLER_REQUIRE_OPENCL") == "1":
            pytest.fail(f"SIMPLER_REQUIRE_OPENCL=1 and no OpenCL device: {e}")
        pytest.skip(f"no OpenCL device: {e}")
