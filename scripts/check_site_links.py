"""Checks every internal link of a built HTML site: each href and src that is not external names a file
of the site, and each #fragment an id in that file. Prints each broken link (page, link, why) and
exits 1 if there is one.

    python scripts/check_site_links.py build/docs/html
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL_SCHEMES = ("http", "https", "mailto", "data", "javascript")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def broken_links(site: Path) -> list[str]:
    pages: dict[Path, _Page] = {}
    for html in sorted(site.rglob("*.html")):
        page = _Page()
        page.feed(html.read_text(encoding="utf-8"))
        pages[html.resolve()] = page
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in EXTERNAL_SCHEMES or parts.netloc:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            where = f"{path.relative_to(site.resolve())}: {link}"
            if site.resolve() not in (target, *target.parents):
                broken.append(f"{where}: leaves the site")
            elif target.is_dir():
                if not (target / "index.html").is_file():
                    broken.append(f"{where}: a folder with no index.html")
            elif not target.is_file():
                broken.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: no id '{unquote(parts.fragment)}' in {target.name}")
    return broken


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[1]).is_dir():
        print(f"usage: {argv[0]} SITE_DIR (a built HTML site)", file=sys.stderr)
        return 2
    broken = broken_links(Path(argv[1]))
    for line in broken:
        print(line)
    print(f"{len(broken)} broken internal links" if broken else "every internal link resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
