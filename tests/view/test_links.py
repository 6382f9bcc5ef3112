"""Deep links, the note a running viewer leaves, and the line other commands print."""

from __future__ import annotations

import os
import socket

import pytest

from agentmemgate.view import links


@pytest.fixture
def notes(tmp_path, monkeypatch):
    monkeypatch.setattr(links, "_folder", lambda: tmp_path / "notes")
    return tmp_path / "notes"


def test_page_urls_are_query_parameters():
    assert (
        links.page_url("trace", arc="a&b", system="x", compare=None) == "trace?arc=a%26b&system=x"
    )
    assert links.page_url("arcs", check_failed=True, value=False) == "arcs?check_failed=true"
    with pytest.raises(ValueError):
        links.page_url("admin")


def test_the_hint_links_a_running_viewer_else_says_how_to_start_one(notes, tmp_path):
    ws = tmp_path / "ws"
    hint = links.viewer_hint(ws, "trace", arc="A", system="s")
    assert hint == (
        f"To browse it: amg view --workspace {ws}, then open "
        f"http://127.0.0.1:{links.DEFAULT_PORT}/trace?arc=A&system=s"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        links.register(ws, url, os.getpid())
        assert links.viewer_hint(ws, "results") == f"In the viewer: {url}/results"
        assert links.running_viewer(tmp_path / "other") is None
    assert links.running_viewer(ws) is None  # the port closed: the note is ignored
    (notes / "1.json").write_text('{"workspace": "x", "url": "http://127.0.0.1:1", "pid": 0}')
    links.register(ws, "http://127.0.0.1:2", os.getpid())
    assert sorted(f.name for f in notes.glob("*.json")) == sorted([f"{port}.json", "2.json"])


def test_serving_beyond_this_machine_warns_in_one_line():
    from agentmemgate.view.server import remote_warning

    assert remote_warning("127.0.0.1", 8502) is None and remote_warning("::1", 8502) is None
    line = remote_warning("0.0.0.0", 8502)
    assert "\n" not in line and "anyone who can reach this port can read" in line
