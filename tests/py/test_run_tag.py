"""A test run tells its own /dev/shm objects and processes from everyone else's: conftest claims a
run tag (SIMPLER_SHM_TAG), every process the run starts inherits it, and simpler draws their owner
nonces under it, so their shm names start with "sp" + the tag. Another test run (another tag) and a
user's program (no tag) beside this one hold objects and processes that the run's checks never
count: the leak checks of these very tests run while the neighbours hold objects they made during
the tests."""

import os
import subprocess
import sys

import pytest

from isolation import RUN_TAG, run_processes, shm_names, wait_until  # conftest puts tests/chaos on the path
from simpler import create_buffer

# Makes one 64-byte buffer per "make" line and prints its shm name; holds them until stdin closes.
HOLDER = """
import sys
from simpler import create_buffer
held = []
for line in sys.stdin:
    held.append(create_buffer(64))
    print(held[-1].descriptor.body.decode(), flush=True)
for b in held:
    b.close()
"""


class Holder:
    def __init__(self, env):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.names = []

    def make(self) -> str:
        self.proc.stdin.write("make\n")
        self.proc.stdin.flush()
        self.names.append(self.proc.stdout.readline().strip())
        assert self.names[-1].startswith("sp"), self.names
        return self.names[-1]

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        assert wait_until(lambda: [n for n in self.names if os.path.exists(f"/dev/shm/{n}")], 30.0) == []


def _environment(tag):
    env = {k: v for k, v in os.environ.items() if k != RUN_TAG}
    if tag is not None:
        env[RUN_TAG] = tag
    return env


def _holder_not_of_this_run(tag):
    """A holder whose names do not carry this run's tag (a random nonce can, once in 65,536)."""
    while True:
        h = Holder(_environment(tag))
        if not h.make().startswith("sp" + os.environ[RUN_TAG]):
            return h
        h.close()


@pytest.fixture(scope="module")
def neighbours():
    ours = os.environ[RUN_TAG]
    other_tag = next(t for t in ("0000", "ffff") if t != ours)
    hs = {"another run": _holder_not_of_this_run(other_tag), "a user's program": _holder_not_of_this_run(None)}
    yield hs
    for h in hs.values():
        h.close()


@pytest.mark.parametrize("who", ["another run", "a user's program"])
def test_a_neighbours_objects_and_process_are_not_this_runs(neighbours, who):
    h = neighbours[who]
    made = h.make()  # during this test: the leak check after it must not count it
    assert os.path.exists(f"/dev/shm/{made}")
    assert not any(n in shm_names() for n in h.names)
    assert h.proc.pid not in run_processes(set())


def test_a_process_of_this_run_and_its_objects_are_the_runs():
    h = Holder(dict(os.environ))
    try:
        made = h.make()
        assert made.startswith("sp" + os.environ[RUN_TAG]) and made in shm_names()
        assert h.proc.pid in run_processes(set())
    finally:
        h.close()
    assert made not in shm_names()


def test_this_processs_own_objects_carry_the_tag():
    with create_buffer(8) as b:
        assert b.descriptor.body.decode().startswith("sp" + os.environ[RUN_TAG])


@pytest.mark.parametrize("bad", ["BEEF", "bee", "beef0", "be-f"])
def test_a_malformed_tag_refuses_the_buffer_naming_the_variable_and_the_rule(bad):
    code = "from simpler import create_buffer\ncreate_buffer(8)"
    p = subprocess.run([sys.executable, "-c", code], env=_environment(bad), capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert f"ValueError: SIMPLER_SHM_TAG='{bad}': must be 4 lowercase hex digits" in p.stderr, p.stderr
