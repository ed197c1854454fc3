"""The documentation site's local links and pictures, checked after the build (``make docs`` fails on a broken one).

Sphinx warns about a broken cross-reference, but not about a picture that a page shows with raw HTML
(``<img src="images/web-phone.png">``) and that the build never copied, nor about a link into a page
at an anchor the page lacks (``viewcode``'s ``#lama_env.batched.encoder_rules``), nor about a
docstring's Markdown shown as it is.  :func:`broken` reads every page of the built site and names
each ``href`` or ``src`` that points to a file the site lacks, or to an ``#anchor`` that its page has
no element with that ``id`` for, and each page of the API reference (``api/``) whose text still holds
Markdown: a code fence, a pipe table's rule (``|---|``) or a ``##`` heading.  ``docs/conf.py`` runs
it when the build finishes and fails the build on what it finds; ``python -m tools.site_check
docs/_build/html`` runs it alone.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["broken", "main"]

#: Markdown left in a page's text: a code fence, a pipe table's rule, a heading (outside code: ``##`` and more).
RAW_MARKDOWN = re.compile(r"^\s*(```|\|?\s*:?-{3,}:?\s*\|)", re.M)
RAW_HEADING = re.compile(r"^\s*#{2,6} \w", re.M)


class _Page(HTMLParser):
    """A page's ``id``s and the local targets of its ``href`` and ``src`` attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.targets: list[tuple[str, str]] = []  # (attribute, value)
        self.text: list[str] = []  # the page's text outside code
        self.code: list[str] = []  # the text of its code blocks
        self._in_code = 0
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self._in_code += 1
        elif tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and (name == "id" or tag == "a"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.targets.append((name, value))

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._in_code:
            self._in_code -= 1
        elif tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            (self.code if self._in_code else self.text).append(data)


def _is_local(value: str) -> bool:
    parts = urlsplit(value)
    return not (parts.scheme or parts.netloc or value.startswith("//"))


def broken(site: str | Path) -> list[str]:
    """Every broken local link or picture of the built site ``site``, as ``page: target (why)`` lines."""
    root = Path(site)
    pages: dict[Path, _Page] = {}

    def page(path: Path) -> _Page:
        if path not in pages:
            parser = _Page()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            pages[path] = parser
        return pages[path]

    problems = []
    for path in sorted(root.rglob("*.html")):
        if "_static" in path.relative_to(root).parts:
            continue
        for attr, value in page(path).targets:
            if not _is_local(value) or not value.strip():
                continue
            parts = urlsplit(value)
            dest = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            where = path.relative_to(root).as_posix()
            if parts.path and dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                what = "picture" if attr == "src" else "link"
                problems.append(f"{where}: {value} (a {what} to a file the site lacks)")
            elif parts.fragment and dest.suffix == ".html" and unquote(parts.fragment) not in page(dest).ids:
                problems.append(f"{where}: {value} (no #{unquote(parts.fragment)} on that page)")
        rel = path.relative_to(root)
        if rel.parts[0] == "api":
            text, code = "".join(page(path).text), "".join(page(path).code)
            raw = RAW_MARKDOWN.search(text) or RAW_MARKDOWN.search(code) or RAW_HEADING.search(text)
            if raw:
                problems.append(f"{rel.as_posix()}: {raw.group(0).strip()!r} (a docstring's Markdown shown raw)")
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.site_check SITE``: print the broken links and pictures; exit 1 if there are any."""
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0] if args else "docs/_build/html")
    found = broken(site)
    for line in found:
        print(line)
    print(f"{len(found)} broken local link(s) or picture(s) in {site}" if found else f"{site}: no broken local link")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
