"""The wire-isolation lint passes on this tree and catches a forbidden include,
direct or through another header, naming the file and the include chain."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LINT = Path(__file__).with_name("check_kernel_wire_isolation.py")
REPO = LINT.parents[2]


def run_lint(root):
    return subprocess.run([sys.executable, str(LINT), "--root", str(root)], capture_output=True, text=True)


@pytest.fixture
def tree(tmp_path):
    shutil.copytree(REPO / "src", tmp_path / "src")
    return tmp_path


def test_the_project_tree_is_clean():
    result = run_lint(REPO)
    assert result.returncode == 0, result.stderr


def test_a_kernel_including_buffer_h_fails(tree):
    kernel = tree / "src/simpler/chip/kernels/bad_kernel.cpp"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_text('#include "simpler/task_interface/tensor.h"\n#include "simpler/task_interface/buffer.h"\n')
    result = run_lint(tree)
    assert result.returncode == 1
    assert "src/simpler/chip/kernels/bad_kernel.cpp" in result.stderr
    assert "buffer.h" in result.stderr


def test_an_indirect_include_through_a_header_fails_with_its_chain(tree):
    helper = tree / "src/simpler/chip/helper.h"
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_text('#pragma once\n#include "simpler/task_interface/task_args_wire.h"\n')
    orch = tree / "src/simpler/chip/orchestration/my_orch.cpp"
    orch.parent.mkdir(parents=True, exist_ok=True)
    orch.write_text('#include "../helper.h"\n')
    result = run_lint(tree)
    assert result.returncode == 1
    assert "src/simpler/chip/orchestration/my_orch.cpp" in result.stderr
    assert "src/simpler/chip/helper.h -> src/simpler/task_interface/task_args_wire.h" in result.stderr


def test_chip_side_headers_are_allowed(tree):
    kernel = tree / "src/simpler/chip/kernels/good_kernel.cpp"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_text('#include "simpler/task_interface/tensor.h"\n#include "simpler/task_interface/task_args.h"\n')
    assert run_lint(tree).returncode == 0
