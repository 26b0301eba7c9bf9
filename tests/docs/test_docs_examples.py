"""Every example of the tutorial and the API reference runs as it is written: each ```python block of
docs/tutorial/ and docs/reference/ is a whole program, run in a fresh interpreter. (The how-to and
explanation pages show fragments of a program; `examples/` holds whole ones, run by
tests/py/test_examples.py.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = ("tutorial", "reference")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def examples() -> list[tuple[str, str]]:
    found = []
    for folder in RUNNABLE:
        for page in sorted((ROOT / "docs" / folder).glob("*.md")):
            for k, block in enumerate(BLOCK.findall(page.read_text(encoding="utf-8"))):
                found.append((f"{folder}/{page.stem}[{k}]", block))
    return found


@pytest.mark.parametrize(("where", "code"), examples(), ids=[where for where, _ in examples()])
def test_example_runs(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, f"docs/{where} failed:\n{run.stdout}\n{run.stderr}"
