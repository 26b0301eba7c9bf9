"""The documentation site: it builds with no warning, every public name has a reference entry, and
every internal link resolves."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import zlib
from pathlib import Path

import simpler
from built_site import site  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parents[2]
CHECK_LINKS = ROOT / "scripts" / "check_site_links.py"


def reference_entries(site: Path) -> dict[str, tuple[str, str]]:
    """Each documented Python object's name -> (its role, its page), read from the site's objects.inv
    (four header lines, then zlib-compressed lines `name role priority uri display-name`)."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    assert raw.startswith(b"# Sphinx inventory version 2"), raw[:40]
    entries = {}
    for line in zlib.decompress(raw[header_end:]).decode("utf-8").splitlines():
        name, role, _priority, uri = line.split(" ", 4)[:4]
        if role.startswith("py:"):
            entries[name] = (role, uri.split("#")[0])
    return entries


def test_every_public_name_has_a_reference_entry(site: Path) -> None:
    entries = reference_entries(site)
    names = [f"simpler.{name}" for name in simpler.__all__] + [f"simpler.abi.{name}" for name in simpler.abi.__all__]
    missing = [name for name in names if name not in entries]
    assert not missing, f"public names with no entry in the API reference: {missing}"
    for name in names:
        assert entries[name][1].startswith("reference/"), name


# The classes a user holds: every public member of each has its own entry.
HELD = [
    simpler.Worker,
    simpler.Orchestrator,
    simpler.RunFuture,
    simpler.RunError,
    simpler.Buffer,
    simpler.SharedTensor,
    simpler.DeviceBuffer,
    simpler.Domain,
    simpler.GlobalDomain,
    simpler.WindowBuffer,
    simpler.MappedArgs,
    simpler.Progress,
    simpler.TaskArgs,
    simpler.Tensor,
]


def test_every_public_member_of_a_held_class_has_an_entry(site: Path) -> None:
    entries = reference_entries(site)
    missing = [
        f"{cls.__name__}.{member}"
        for cls in HELD
        for member in vars(cls)
        if not member.startswith("_") and f"simpler.{cls.__name__}.{member}" not in entries
    ]
    assert not missing, f"public members with no entry in the API reference: {missing}"


def test_a_class_entry_lists_its_methods_with_their_parameters(site: Path) -> None:
    entries = reference_entries(site)
    assert entries["simpler.Worker"] == ("py:class", "reference/worker.html")
    for method in ("init", "register", "run", "submit", "alloc_shared_tensor", "release_buffer", "close"):
        assert entries[f"simpler.Worker.{method}"] == ("py:method", "reference/worker.html"), method
    page = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "task-args.html").read_text(encoding="utf-8")))
    # a nanobind method: its real signature, never the catch-all overload that names refused arguments
    assert "add_tensor(self, tensor: Tensor, tag: TensorArgType = simpler.TensorArgType.INPUT) → None" in page
    assert "_simpler_refused_arguments" not in page


def test_every_internal_link_resolves(site: Path) -> None:
    check = subprocess.run([sys.executable, str(CHECK_LINKS), str(site)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#there">ok</a> <a href="sub/page.html#gone">no id</a>'
        ' <a href="missing.html">no file</a> <a href="https://example.org/x">external</a>'
    )
    (tmp_path / "sub" / "page.html").write_text('<h1 id="there">t</h1><a href="../index.html">up</a>')
    check = subprocess.run([sys.executable, str(CHECK_LINKS), str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1
    assert check.stdout.splitlines() == [
        "index.html: sub/page.html#gone: no id 'gone' in page.html",
        "index.html: missing.html: no such file",
        "2 broken internal links",
    ]
