"""Checks on a report's HTML page (``--html``), shared by the eval, validation and agreement tests:
it needs nothing from outside the file, shows the Markdown's tables cell for cell, and shows
hostile text as text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Text that would run, call out or turn into markup if a page passed it through.
HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
    "![pixel](https://example.com/t.png) <https://example.com/a> **bold**"
)
_CALLING = (
    "script",
    "iframe",
    "object",
    "embed",
    "link",
    "base",
    "form",
    "frame",
    "svg",
    "audio",
    "video",
    "source",
)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.style = ""
        self._cell: list[str] | None = None
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        self._in_style = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_style:
            self.style += data


def parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    return p


def assert_self_contained(page: str) -> _Page:
    """No tag that runs or fetches, no event attribute, no link, no image but a data URI, no CSS
    that fetches; and the policy that forbids all of it."""
    p = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    names = [t for t, _ in p.tags]
    assert not [t for t in names if t in _CALLING], names
    for tag, attrs in p.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        assert "href" not in attrs, (tag, attrs)
        if "src" in attrs:
            assert tag == "img" and str(attrs["src"]).startswith("data:image/png;base64,"), tag
    assert "url(" not in p.style and "@import" not in p.style
    csp = [a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv")]
    assert len(csp) == 1 and "default-src 'none'" in csp[0] and "script-src" not in csp[0]
    return p


def markdown_tables(md: str) -> list[list[list[str]]]:
    """The Markdown's tables as rows of cells, inline marks (``**``, backticks) dropped."""
    tables: list[list[list[str]]] = []
    in_table = False
    for line in md.splitlines():
        if line.startswith("|"):
            if re.fullmatch(r"\|(-+\|)+", line):
                continue
            if not in_table:
                tables.append([])
            cells = [
                c.strip().replace("**", "").replace("`", "") for c in line.strip()[1:-1].split("|")
            ]
            tables[-1].append(cells)
        in_table = line.startswith("|")
    return tables


def assert_same_tables(md: str, page: str) -> None:
    """Every table of the Markdown, in order, cell for cell (so every k/n, percent and interval)."""
    want = markdown_tables(md)
    assert want, "the report has tables"
    assert parse(page).tables == want


def assert_shown_as_text(page: str, hostile: str = HOSTILE) -> None:
    """``hostile`` reads as written (escaped), and none of it became a tag or an attribute."""
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "[click](javascript:alert(3))" in page and "javascript:" not in page.replace(
        "[click](javascript:alert(3))", ""
    )
    assert "![pixel](https://example.com/t.png)" in page
    assert "&lt;https://example.com/a&gt;" in page
    assert "<script" not in page and "onerror=alert(2)>" not in page
    assert_self_contained(page)
