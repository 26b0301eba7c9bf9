"""Every example in examples/ runs, with small sizes, and says it succeeded
(each example's main() returns 0 only when its own checks hold)."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from opencl_helpers import require_opencl
from torch_helpers import require_torch
from worker_helpers import time_bound  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# Each example and the arguments that keep it small; every examples/*.py must be listed.
SMALL_ARGS = {
    "quickstart": [],
    "stencil_tiles": ["--grid", "24", "--tiles", "3", "--steps", "2"],
    "cholesky": ["--n", "512", "--tile", "64", "--chips", "2", "--dtype", "float32"],
    "device_memory": ["--batch", "8", "--features", "4", "--hidden", "6", "--out", "2"],
    "domain_all_gather": ["--batch", "8", "--features", "4", "--out", "4"],
    "failure_handling": ["--timeout", "0.5"],
    "trace_perfetto": ["--size", "16"],
    "training_step": ["--steps", "3", "--batch", "8", "--features", "4", "--out", "2"],
}


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_run_here():
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(SMALL_ARGS)


@pytest.mark.parametrize("name", sorted(SMALL_ARGS))
def test_example_runs(name, capsys, monkeypatch):
    if name == "training_step":  # the one example on torch tensors
        require_torch()
    monkeypatch.setattr(sys, "argv", [f"{name}.py"])
    assert load(name).main(SMALL_ARGS[name]) == 0, capsys.readouterr().out


def test_cholesky_in_float64_and_of_a_matrix_that_is_not_positive_definite(capsys, monkeypatch):
    """FLOAT64 at the acceptance size; then --not-spd: the run fails, and main() returns 0 only when the
    failure names the potrf task of the last diagonal tile and LAPACK's info."""
    monkeypatch.setattr(sys, "argv", ["cholesky.py"])
    example = load("cholesky")
    args = ["--n", "512", "--tile", "64", "--chips", "2"]
    assert example.main([*args, "--dtype", "float64"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "edges inferred: 252 between the factorisation's tasks (the textbook DAG has 252)" in out
    assert example.main([*args, "--dtype", "float64", "--not-spd"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "(callable 'std.potrf', member 0) on chip 0 failed" in out
    assert "std.potrf: the 64 x 64 tile is not positive definite: LAPACK dpotrf info 33" in out
    assert "is potrf of tile (7,7): rows 448..511, columns 448..511" in out


def test_the_readme_example_is_examples_quickstart():
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme[readme.index("## Example") :], re.S).group(1)
    head, with_block = code[: code.index("with Worker")], code[code.index("with Worker") :]
    example = (EXAMPLES / "quickstart.py").read_text()
    body = example[
        example.index("    # --- the README's example, as printed there ---\n") : example.index(
            "    # --- end of the README's example ---"
        )
    ].splitlines(keepends=True)[1:]
    assert "".join(line[4:] if line.strip() else line for line in body) == with_block, (
        "README.md's example and examples/quickstart.py differ"
    )
    for line in head.splitlines():
        assert line in example.splitlines(), f"README.md's line {line!r} is not in examples/quickstart.py"


# Communication domains are refused on OpenCL chips (their windows are host
# shared memory an OpenCL kernel cannot address): that example stays simulated.
ON_OPENCL = sorted(set(SMALL_ARGS) - {"domain_all_gather"})


@pytest.mark.parametrize("name", ON_OPENCL)
def test_example_runs_on_opencl_chips(name, capsys, monkeypatch):
    require_opencl()
    if name == "training_step":
        require_torch()
    monkeypatch.setenv("SIMPLER_DEVICE", "opencl")
    monkeypatch.setattr(sys, "argv", [f"{name}.py"])
    assert load(name).main(SMALL_ARGS[name]) == 0, capsys.readouterr().out
