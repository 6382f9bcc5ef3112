"""The overview page's counts agree with ``amg report validation`` and the build, on a fresh
offline build and after a split is rebuilt (whose replaced arcs' verdicts stay stored)."""

from __future__ import annotations

from agentmemgate.validate import validation_report
from agentmemgate.view.data import Reader
from agentmemgate.view.overview import CURRENT, checks_rows, design_rows, recovery_matrices
from agentmemgate.workspace import Workspace

from ._apptest import run, shown
from .conftest import copy_workspace


def test_overview_counts_match_the_validation_report_and_the_build(
    monkeypatch, small_build, tmp_path
):
    root, _ = small_build
    path = copy_workspace(root / "ws", tmp_path / "ws")
    ws = Workspace(path, create=False)
    splits = [s for (s,) in ws.db.execute("select distinct split from arcs").fetchall()]
    report = validation_report(ws, splits)
    arcs = dict(ws.db.execute("select split, count(*) from arcs group by split").fetchall())
    passing = dict(
        ws.db.execute(
            "select s.split, count(*) from specs s join arcs a on a.id = s.id where not exists "
            "(select 1 from checks c where c.arc_id = s.id and c.passed = 0) group by 1"
        ).fetchall()
    )
    ws.db.conn.close()
    block = report.by_judge[report.primary_judge]

    r = Reader(path)
    _, split_rows, _ = design_rows(r)
    assert {s["split"]: s["rendered"] for s in split_rows if s["rendered"]} == arcs
    assert {c["split"]: c["arcs passing every check"] for c in checks_rows(r)} == {
        s: f"{passing.get(s, 0)}/{n}" for s, n in arcs.items()
    }
    matrices = {
        m["factor"]: (m["recovered"], m["judged"])
        for m in recovery_matrices(r)
        if m["judge"] == report.primary_judge
    }
    assert matrices == {f: (p.k, p.n) for f, p in block.recovery.by_factor.items()}
    realism = {
        x["criterion"]: (x["passed"], x["passed"] + x["failed"] + x["errors"])
        for x in r.realism()
        if x["judge"] == report.primary_judge
    }
    assert realism == {c: (p.k, p.n) for c, p in block.realism.items()}
    r.close()

    page = shown(run(monkeypatch, path, "overview"))
    for k, n in matrices.values():
        assert f"{k} of {n} arcs recovered" in page


def test_after_a_rebuild_the_overview_counts_only_the_current_arcs(
    monkeypatch, small_build, tmp_path
):
    """A split rebuilt with another seed replaces its arcs; the old arcs' verdicts stay stored,
    and neither the report nor the overview counts them."""
    from agentmemgate.pipeline import build

    root, _ = small_build
    path = copy_workspace(root / "ws", tmp_path / "ws")
    build(path, tmp_path / "out", split="core", seed=1, n_per_cell=2, show_progress=False)
    ws = Workspace(path, create=False)
    splits = [s for (s,) in ws.db.execute("select distinct split from arcs").fetchall()]
    report = validation_report(ws, splits)
    stored = ws.db.execute(
        "select count(*) from judge_verdicts where task = 'recovery' and status = 'ok' and "
        "factor = 'outcome'"
    ).fetchone()[0]
    ws.db.conn.close()
    block = report.by_judge[report.primary_judge]
    assert stored > block.recovery.by_factor["outcome"].n  # the replaced arcs' verdicts

    r = Reader(path)
    shown_counts = {
        m["factor"]: (m["recovered"], m["judged"])
        for m in recovery_matrices(r)
        if m["judge"] == report.primary_judge
    }
    realism = {
        x["criterion"]: (x["passed"], x["passed"] + x["failed"] + x["errors"])
        for x in r.realism()
        if x["judge"] == report.primary_judge
    }
    r.close()
    assert shown_counts == {f: (p.k, p.n) for f, p in block.recovery.by_factor.items()}
    assert realism == {c: (p.k, p.n) for c, p in block.realism.items()}

    at = run(monkeypatch, path, "overview")
    page = shown(at)
    k, n = shown_counts["outcome"]
    assert f"{k} of {n} arcs recovered" in page
    assert [c.value for c in at.caption].count(CURRENT) == 2  # realism and recovery
