"""`python -m simpler demo` runs the tiled matmul on 2 chips and the sub-worker
reduction, matches NumPy, and reports the edges it inferred and the ones precise
overlap avoided; `python -m simpler wire` round-trips its blob and shows each
refusal with the message that names the field and the rule."""

import re
import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "-m", "simpler", *args], capture_output=True, text=True, timeout=120)


def test_demo_computes_the_right_answer_and_explains_its_graph():
    result = _run("demo")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "C matches NumPy: True; row-block sums match NumPy: True" in out
    # Each of 2 row blocks reads all 4 tiles: every pair has an edge, unless the
    # tile had already finished when its reader was submitted (a busy machine).
    edges = int(re.search(r"edges inferred \((\d+)\):", out).group(1))
    done_before = int(re.search(r"submitted \((\d+)\)", out).group(1))
    assert edges + done_before == 8, out
    assert out.count("READ_AFTER_WRITE") == edges
    assert "WRITE_AFTER_WRITE" not in out  # the 4 tiles write disjoint columns of C
    assert "edges avoided by precise overlap (6)" in out
    assert "on chip 0" in out and "on chip 1" in out
    assert "on sub-worker" in out
    assert "tiles that ran at the same time on the two chips:" in out


def test_demo_writes_a_chrome_trace(tmp_path):
    import json

    path = tmp_path / "demo.json"
    result = _run("demo", "--trace", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    assert len(slices) == 6  # 4 matmul tiles + 2 row-block sums
    assert {e["name"] for e in slices} >= {"std.matmul"}


def test_wire_demo_runs_and_shows_refusals():
    result = _run("wire")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "read back 2 tensors, scalars [42]: equal" in out
    assert "FORK_COW must grant READ only" in out
    assert "tag OUTPUT_EXISTING needs access the buffer does not grant" in out
    assert "tensor[1]: Tensor.buffer.body[31]: must be zero past body_len (got 0xee)" in out
    assert out.count("refused ") == 7


def test_demo_levels_4_tiles_over_two_l3_workers_and_matches_numpy(tmp_path):
    trace = tmp_path / "tree.json"
    result = _run("demo", "--levels", "4", "--trace", str(trace))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "C matches NumPy: True" in out
    assert "L4 edges inferred: 0" in out and "L4/L3[0] edges inferred: 0" in out and "L4/L3[1] edges inferred: 0" in out
    import json

    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert names == {"simpler Worker L4 (level 4)", "simpler Worker L4/L3[0]", "simpler Worker L4/L3[1]"}
    assert sum(1 for e in events if e["ph"] == "X" and e["name"] == "std.matmul") == 8
