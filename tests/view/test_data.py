"""The viewer's reader: read-only, readable while another command writes, paged in SQL."""

from __future__ import annotations

import sqlite3

import pytest

from agentmemgate.view.data import ArcFilter, Reader

from ._apptest import run


def test_the_reader_cannot_write(viewed):
    path, _, _ = viewed
    r = Reader(path)
    with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
        r.conn.execute("insert into eval_runs (id) values (999999)")
    r.conn.execute("pragma query_only = 0")  # the file itself is opened read-only
    with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
        r.conn.execute("create table x (a)")
    r.close()


def test_pages_read_while_another_command_writes_and_change_nothing(monkeypatch, viewed):
    from agentmemgate.view.app import TITLES

    path, _, _ = viewed
    db = path / "workspace.db"
    before = db.read_bytes()
    writer = sqlite3.connect(db)
    assert writer.execute("pragma journal_mode").fetchone()[0] == "wal"
    writer.execute("begin immediate")
    writer.execute("delete from eval_scores")  # uncommitted: the viewer reads the snapshot before
    try:
        for page in TITLES:
            at = run(monkeypatch, path, page)
            assert not at.error, (page, [e.value for e in at.error])
        at = run(
            monkeypatch,
            path,
            "arcs",
            split="core",
            system="literal-ungated",
            measure="end_contamination",
        )
        assert not at.markdown[0].value.startswith("**0**")
    finally:
        writer.rollback()
        writer.close()
    assert db.read_bytes() == before


def test_a_filter_pages_its_arcs_and_counts_them_all(viewed):
    path, _, _ = viewed
    r = Reader(path)
    everything, total = r.arc_page(ArcFilter(), 0, 1000)
    assert total == len(everything) > 10
    first, n = r.arc_page(ArcFilter(), 0, 10)
    second, _ = r.arc_page(ArcFilter(), 1, 10)
    assert n == total and [x["id"] for x in first + second] == [x["id"] for x in everything[:20]]
    core, n_core = r.arc_page(ArcFilter(split="core", outcome="open"), 0, 1000)
    assert n_core == len(core) and {(x["split"], x["outcome"]) for x in core} == {("core", "open")}


def test_a_missing_workspace_is_one_line(tmp_path):
    from agentmemgate.errors import WorkspaceError

    with pytest.raises(WorkspaceError, match=r"^No workspace at .* pass the --workspace DIR"):
        Reader(tmp_path / "nowhere")
