"""/dev/shm space: a POSIX shm buffer reserves its pages when it is created, so
a full /dev/shm (Docker's default is 64 MiB) is an error naming the size, the
free space and the knob at create_buffer, never a SIGBUS at the first write;
a refused create leaves nothing behind."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from simpler import create_buffer


def _free_bytes() -> int:
    st = os.statvfs("/dev/shm")
    return st.f_bavail * st.f_frsize


def _shm_names() -> set:
    return set(os.listdir("/dev/shm"))


def test_a_buffer_larger_than_the_free_space_is_refused_and_leaves_nothing():
    before = _shm_names()
    want = _free_bytes() + (1 << 30)
    with pytest.raises(RuntimeError) as e:
        create_buffer(want)
    msg = str(e.value)
    assert f"cannot reserve {want} bytes" in msg and "/dev/shm" in msg, msg
    assert "are free" in msg and "--shm-size" in msg, msg
    assert _shm_names() - before == set()
    with create_buffer(4096) as b:  # the identity slot and the tracker are fine
        b.shm.buf[:4] = b"good"


SMALL_SHM = textwrap.dedent("""
    import os, sys
    from simpler import create_buffer
    mib = 1 << 20
    a = create_buffer(3 * mib)                     # fits the 4 MiB /dev/shm
    try:
        with open("/dev/shm/filler", "wb") as f:   # a sparse buffer would leave room for this
            f.write(b"x" * (2 * mib))
            f.flush()
        print("filler-fit")
    except OSError as e:
        print("filler-refused", e.errno)
    finally:
        os.unlink("/dev/shm/filler")
    a.shm.buf[:] = b"y" * (3 * mib)                # every page is there: no SIGBUS
    try:
        create_buffer(3 * mib)
        print("second-fit")
    except RuntimeError as e:
        print("second-refused:", e)
    print("left:", sorted(n for n in os.listdir("/dev/shm") if n != a.descriptor.body.decode()))
    a.close()
""")


def test_in_a_small_dev_shm_the_pages_are_reserved_at_create_and_an_overflow_is_refused():
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        pytest.skip("needs root and unshare(1) to mount a small tmpfs on /dev/shm")
    probe = subprocess.run([unshare, "-m", "sh", "-c", "mount -t tmpfs -o size=4m tmpfs /dev/shm"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a new mount namespace: {probe.stderr!r}")
    script = f'mount -t tmpfs -o size=4m tmpfs /dev/shm && exec {sys.executable} -c "$0"'
    r = subprocess.run([unshare, "-m", "sh", "-c", script, SMALL_SHM], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("filler-refused"), lines
    assert lines[1].startswith("second-refused:") and "cannot reserve 3145728 bytes" in lines[1], lines
    assert "--shm-size" in lines[1], lines
    assert lines[2] == "left: []", lines
