"""The chip cache is this user's alone (src/simpler/chip/private_cache.h): a
kernel library planted under its key is loaded only when this user alone may
write it and its bytes are the ones recorded when it was built, else it is
built again and the real code runs; a cache folder others may write, or
another user's, is not used (stderr names it, its owner and mode) and the
files go to /tmp/simpler-cache-<uid>; a link planted where a file is written
is replaced, never written through; without HOME two users get different
private folders. The suite runs as root, so a test can hand a file to
`nobody`."""

import hashlib
import json
import os
import pwd
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simpler import ChipCallable, DataType, TensorArgType, Worker, view_array
from simpler._core import chip_cache_dir, read_private_file, write_private_file
from simpler.runtime.trace import write_chrome_trace
from worker_helpers import args, closing  # noqa: F401

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "cpp_host" / "kernels.cpp"
REAL = "alpha * px[base[0] + uint64_t{j} * stride[0]] + beta"
F32 = DataType.FLOAT32
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def axpb_result(callable_) -> np.ndarray:
    """y = 2x + 1 through `callable_` (example.axpb) on a one-chip Worker."""
    w = Worker(level=3, num_chips=1)
    h = w.register(callable_)
    w.init()
    try:
        buf = w.create_buffer(2 * 8 * 4)
        x, y = buf.tensor((2, 4), F32), buf.tensor((2, 4), F32, byte_offset=8 * 4)
        view_array(x)[...] = np.arange(8, dtype=np.float32).reshape(2, 4)
        w.run(
            lambda o, _a, _c: o.submit_next_level(
                h,
                args((x, TensorArgType.INPUT), (y, TensorArgType.OUTPUT_EXISTING), scalars=(f32_bits(2), f32_bits(1))),
                worker=0,
            )
        )
        return view_array(y).copy()
    finally:
        w.close()


EXPECTED = np.arange(8, dtype=np.float32).reshape(2, 4) * 2 + 1


def planted(tmp_path: Path, cache: Path) -> Path:
    """The library of `cache` for KERNELS replaced by one that adds 1000 (built from a copy of the
    source), with a .sum record that matches the planted bytes: only who owns it and its mode can
    tell it from the real one."""
    real = Path(ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache)).library)
    src = tmp_path / "evil.cpp"
    text = KERNELS.read_text()
    assert REAL in text
    src.write_text(text.replace(REAL, REAL + " + 1000.0f"))
    evil = Path(ChipCallable.from_source(src, "example.axpb", cache_dir=str(tmp_path / "evil-cache")).library)
    data = evil.read_bytes()
    real.unlink()
    real.write_bytes(data)
    real.chmod(0o755)
    Path(str(real) + ".sum").write_bytes(f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode())
    Path(str(real) + ".sum").chmod(0o600)
    return real


def test_a_cached_library_this_user_alone_wrote_is_loaded_as_it_is(tmp_path):
    """The control: a plant with a matching record, owned by this user and not writable by others,
    is what the cache trusts (so the refusals below are the owner's and the mode's)."""
    lib = planted(tmp_path, tmp_path / "cache")
    again = ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path / "cache"))
    assert again.library == str(lib)
    np.testing.assert_array_equal(axpb_result(again), EXPECTED + 1000)


@ROOT_ONLY
def test_a_library_planted_under_its_key_by_another_user_is_rebuilt(tmp_path):
    lib = planted(tmp_path, tmp_path / "cache")
    nobody = pwd.getpwnam("nobody")
    os.chown(lib, nobody.pw_uid, nobody.pw_gid)
    os.chown(str(lib) + ".sum", nobody.pw_uid, nobody.pw_gid)
    again = ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path / "cache"))
    assert again.library == str(lib) and lib.stat().st_uid == os.geteuid()
    np.testing.assert_array_equal(axpb_result(again), EXPECTED)


def test_a_library_planted_writable_by_others_is_rebuilt(tmp_path):
    lib = planted(tmp_path, tmp_path / "cache")
    lib.chmod(0o666)
    again = ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(tmp_path / "cache"))
    assert stat.S_IMODE(lib.stat().st_mode) & 0o022 == 0
    np.testing.assert_array_equal(axpb_result(again), EXPECTED)


def test_a_library_whose_bytes_are_not_the_recorded_ones_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    real = Path(ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache)).library)
    record = Path(str(real) + ".sum").read_bytes()
    lib = planted(tmp_path, cache)
    Path(str(lib) + ".sum").write_bytes(record)  # the real library's record beside the planted bytes
    np.testing.assert_array_equal(
        axpb_result(ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache))), EXPECTED
    )
    Path(str(planted(tmp_path, cache)) + ".sum").unlink()  # the planted bytes with no record at all
    np.testing.assert_array_equal(
        axpb_result(ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache))), EXPECTED
    )


def build_in_child(cache: Path) -> subprocess.CompletedProcess:
    code = (
        "import sys; from simpler import ChipCallable; "
        f"print(ChipCallable.from_source({str(KERNELS)!r}, 'example.axpb', cache_dir={str(cache)!r}).library)"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("how", ["world-writable", "another user's"])
def test_a_cache_folder_others_may_write_is_not_used_and_the_refusal_names_it(tmp_path, how):
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    if how == "world-writable":
        cache.chmod(0o777)
        said = f"folder {cache} (mode 0777) may be written by group or others"
    else:
        if os.geteuid() != 0:
            pytest.skip("handing a folder to another user needs root")
        nobody = pwd.getpwnam("nobody")
        os.chown(cache, nobody.pw_uid, nobody.pw_gid)
        said = f"folder {cache} is owned by uid {nobody.pw_uid}, not by this user (uid 0)"
    run = build_in_child(cache)
    assert run.returncode == 0, run.stderr
    fallback = f"/tmp/simpler-cache-{os.geteuid()}/chip-libs"
    assert run.stdout.strip().startswith(fallback + "/"), run.stdout
    assert f"simpler: not using the chip cache folder: {said}; using {fallback} instead" in run.stderr, run.stderr
    assert not any(cache.iterdir()), "the refused folder was written"


def test_a_link_planted_where_a_file_is_written_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    trace = tmp_path / "trace.json"
    trace.symlink_to(victim)
    write_chrome_trace(trace, {"traceEvents": []})
    assert victim.read_text() == "untouched"
    assert not trace.is_symlink() and json.loads(trace.read_text()) == {"traceEvents": []}
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    binary = tmp_path / "k.bin"
    binary.symlink_to(victim)
    assert read_private_file(str(binary)) is None  # a link is not read through either
    write_private_file(str(binary), b"bytes")
    assert victim.read_text() == "untouched" and read_private_file(str(binary)) == b"bytes"


def test_the_temporary_names_of_a_build_are_not_foreseeable(tmp_path):
    """The names a build used to write through (<key>.so.tmp.<pid>.<n>, <key>.log.<pid>.<n>), each
    planted as a link to a victim file: the build writes none of them."""
    cache = tmp_path / "cache"
    real = Path(ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache)).library)
    key = real.name[: -len(".so")]
    real.unlink()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    plants = [real.parent / f"{key}.{kind}.{os.getpid()}.{n}" for kind in ("so.tmp", "log") for n in range(8)]
    for p in plants:
        p.symlink_to(victim)
    rebuilt = ChipCallable.from_source(KERNELS, "example.axpb", cache_dir=str(cache))
    assert victim.read_text() == "untouched"
    assert all(p.is_symlink() for p in plants)
    np.testing.assert_array_equal(axpb_result(rebuilt), EXPECTED)


@ROOT_ONLY
def test_without_home_two_users_get_different_private_cache_folders():
    nobody = pwd.getpwnam("nobody")
    shutil.rmtree(f"/tmp/simpler-cache-{nobody.pw_uid}", ignore_errors=True)
    seen = {}
    for who, uid, gid in (("root", 0, 0), ("nobody", nobody.pw_uid, nobody.pw_gid)):
        r, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: that user, with no HOME and no cache variables
            try:
                os.close(r)
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
                for var in ("HOME", "XDG_CACHE_HOME", "SIMPLER_CACHE_DIR", "XDG_RUNTIME_DIR"):
                    os.environ.pop(var, None)
                os.write(wfd, chip_cache_dir().encode())
            finally:
                os._exit(0)
        os.close(wfd)
        with os.fdopen(r, "rb") as f:
            folder = f.read().decode()
        os.waitpid(pid, 0)
        st = os.stat(folder)
        assert st.st_uid == uid and stat.S_IMODE(st.st_mode) & 0o077 == 0, (who, folder, oct(st.st_mode))
        seen[who] = folder
    assert seen == {"root": "/tmp/simpler-cache-0", "nobody": f"/tmp/simpler-cache-{nobody.pw_uid}"}
    assert stat.S_IMODE(os.stat(seen["nobody"]).st_mode) == 0o700  # made by the child: exactly 0700
    shutil.rmtree(seen["nobody"])
