"""The built site in a real browser: headless Chromium loads the API page of Worker and the site's
search, running the site's own JavaScript.

Where no Chromium is installed the tests skip, unless SIMPLER_REQUIRE_BROWSER=1 (`./dev test`
installs Debian's `chromium` and sets it), where they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from built_site import site  # noqa: F401 (the fixture)

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("SIMPLER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"SIMPLER_REQUIRE_BROWSER=1 and none of {BROWSERS} is on PATH (Debian: apt-get install chromium)")
    pytest.skip(f"no headless browser: none of {BROWSERS} is on PATH")


def headless(url: str, profile: Path, *flags: str) -> str:
    """Runs Chromium headless on `url` with `flags` (--no-sandbox: CI runs as root) and returns what it
    printed. The browser runs in a process group of its own, killed once it has answered (or at the
    timeout): a helper it left behind (a crash handler) goes with it."""
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-breakpad", "--no-first-run"]
    command += [f"--user-data-dir={profile}", "--virtual-time-budget=10000", *flags, url]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
    assert proc.returncode == 0, f"{command} exited {proc.returncode}:\n{err[-4000:]}"
    return out


class Dom(HTMLParser):
    """The rendered DOM: each element's id with its tag and classes, and the links in #search-results."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, tuple[str, str]] = {}
        self.classes_of_dl: list[str] = []
        self.search_links: list[str] = []
        self._in_results = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids[a["id"]] = (tag, a.get("class", ""))
        if tag == "dl":
            self.classes_of_dl.append(a.get("class", ""))
        if a.get("id") == "search-results":
            self._in_results = 1
        elif self._in_results and tag == "a" and "href" in a:
            self.search_links.append(a["href"])


def test_the_worker_page_renders_its_methods(site: Path, tmp_path: Path) -> None:
    page = site / "reference" / "worker.html"
    dom = Dom(headless(page.as_uri(), tmp_path / "profile", "--dump-dom"))
    assert dom.ids["simpler.Worker"][0] == "dt"
    assert any(c.split()[:2] == ["py", "class"] for c in dom.classes_of_dl)
    for method in ("init", "register", "run", "submit", "alloc_shared_tensor", "release_buffer", "close"):
        assert dom.ids.get(f"simpler.Worker.{method}", ("",))[0] == "dt", f"Worker.{method} is not on the page"
    # and it is drawn: a screenshot of the page is not blank
    shot = tmp_path / "worker.png"
    headless(page.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600")
    from PIL import Image

    with Image.open(shot) as image:
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50, "the screenshot of the Worker page is (nearly) blank"


def test_the_search_finds_alloc_shared_tensor(site: Path, tmp_path: Path) -> None:
    url = (site / "search.html").as_uri() + "?q=alloc_shared_tensor"
    dom = Dom(headless(url, tmp_path / "profile", "--dump-dom"))
    assert dom.search_links, "the search page shows no result for alloc_shared_tensor"
    assert dom.search_links[0] == "reference/worker.html#simpler.Worker.alloc_shared_tensor", dom.search_links
