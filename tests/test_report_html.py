"""A report's Markdown as one self-contained page: figures embedded from the report's own folder,
report text shown as text."""

from __future__ import annotations

import base64

from report_pages import (
    HOSTILE,
    assert_same_tables,
    assert_self_contained,
    assert_shown_as_text,
    parse,
)

from agentmemgate.report_html import report_html, write_report_html

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)


def test_figures_of_the_folder_are_embedded_and_nothing_else_is(tmp_path):
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "fig.png").write_bytes(PNG)
    (tmp_path / "secret.png").write_bytes(PNG)
    md = (
        "# Report\n\n| system | value |\n|---|---|\n| a | 3/10 30.0% [10.8, 60.3] |\n\n"
        "![Figure 1](fig.png)\n\n![up](../secret.png)\n\n![gone](missing.png)\n"
    )
    path = write_report_html(md, tmp_path / "rep" / "r.html")
    page = path.read_text(encoding="utf-8")
    p = assert_self_contained(page)
    imgs = [a for t, a in p.tags if t == "img"]
    assert imgs == [
        {"src": "data:image/png;base64," + base64.b64encode(PNG).decode(), "alt": "Figure 1"}
    ]
    assert "![up](../secret.png)" in page and "![gone](missing.png)" in page  # read as written
    assert_same_tables(md, page)
    assert "<title>Report</title>" in page
    assert sorted(f.name for f in (tmp_path / "rep").iterdir()) == [
        "fig.png",
        "r.html",
    ]  # no temp file


def test_hostile_text_reads_as_written_in_headings_lists_and_cells():
    md = (
        f"# Report {HOSTILE}\n\n- note {HOSTILE}\n\n[ref]: https://example.com/\n\n"
        f"| system | value |\n|---|---|\n| {HOSTILE} | 1/2 50.0% [9.5, 90.5] |\n"
    )
    page = report_html(md)
    assert_shown_as_text(page)
    assert "[ref]: https://example.com/" in page  # a link definition stays visible text
    assert parse(page).tables[0][1][0].startswith("<script>alert(1)</script> <img src=x")
