"""`amg view` and the viewer lines `amg eval show` and `amg report eval` print."""

from __future__ import annotations

import sqlite3

from typer.testing import CliRunner

from agentmemgate.cli import app

from .conftest import copy_workspace

runner = CliRunner()


def test_a_missing_workspace_is_a_one_line_error(tmp_path):
    r = runner.invoke(app, ["view", "--workspace", str(tmp_path / "nowhere")])
    assert r.exit_code == 1
    assert r.output.count("\n") == 1 and r.output.startswith("Error: No workspace at ")


def test_a_bad_port_is_a_one_line_error(viewed):
    path, _, _ = viewed
    r = runner.invoke(app, ["view", "--workspace", str(path), "--port", "70000"])
    assert r.exit_code != 0 and r.output.count("\n") == 1 and "--port" in r.output


def test_eval_show_and_report_eval_print_where_to_browse(viewed, tmp_path, monkeypatch):
    from agentmemgate.view import links

    monkeypatch.setattr(links, "_folder", lambda: tmp_path / "notes")
    path, _, _ = viewed
    ws = copy_workspace(path, tmp_path / "ws")
    arc = (
        sqlite3.connect(ws / "workspace.db")
        .execute("select arc_id from eval_traces limit 1")
        .fetchone()[0]
    )
    r = runner.invoke(
        app, ["eval", "show", arc, "--system", "literal-gated", "--workspace", str(ws)]
    )
    assert r.exit_code == 0, r.output
    assert r.stderr.strip().endswith(f"/trace?arc={arc}&system=literal-gated")
    assert "amg view --workspace" in r.stderr and "amg view" not in r.stdout
    r = runner.invoke(
        app,
        [
            "report",
            "eval",
            "--split",
            "core",
            "--workspace",
            str(ws),
            "--out",
            str(tmp_path / "rep"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.stderr.strip().splitlines()[-1].endswith("/results?split=core")
