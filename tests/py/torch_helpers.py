"""torch for the tests that use it. ./dev's default environment installs torch (its CPU build) and
sets SIMPLER_REQUIRE_TORCH=1: there a test that needs torch fails without it. Another interpreter's
environment (`PYTHON=3.12 ./dev test`; PyPI's torch for it is a CUDA build of several GB) has none,
and such a test skips, saying why."""

import os

import pytest


def require_torch(*, module_level: bool = False):
    """The torch module; a skip (a failure where SIMPLER_REQUIRE_TORCH=1) when it does not import:
    of the test, or with `module_level`, of the whole file."""
    try:
        import torch
    except ImportError as e:
        if os.environ.get("SIMPLER_REQUIRE_TORCH") == "1":
            pytest.fail(f"SIMPLER_REQUIRE_TORCH=1 and torch does not import: {e}")
        pytest.skip(
            f"torch does not import in this environment ({e}): ./dev installs it for its default Python only",
            allow_module_level=module_level,
        )
    return torch


@pytest.fixture
def torch():
    """torch for a test that names it (conftest.py makes it every test's)."""
    return require_torch()
