"""`python -m simpler demo` runs to completion, round-trips its blob, and shows
each refusal with the message that names the field and the rule."""

import subprocess
import sys


def test_demo_runs_and_shows_refusals():
    result = subprocess.run([sys.executable, "-m", "simpler", "demo"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "read back 2 tensors, scalars [42]: equal" in out
    assert "FORK_COW must grant READ only" in out
    assert "tag OUTPUT_EXISTING needs access the buffer does not grant" in out
    assert "tensor[1]: Tensor.buffer.body[31]: must be zero past body_len (got 0xee)" in out
    assert out.count("refused ") == 7
