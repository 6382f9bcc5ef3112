"""The validation report names only the splits the workspace has (never every split it knows)."""

from typer.testing import CliRunner

from agentmemgate.cli import app


def test_report_lists_only_splits_with_arcs(tmp_path):
    ws = str(tmp_path / "ws")
    runner = CliRunner()
    assert (
        runner.invoke(
            app,
            [
                "build",
                "--split",
                "core",
                "--n-per-cell",
                "1",
                "--workspace",
                ws,
                "--out",
                str(tmp_path / "out"),
                "--no-progress",
            ],
        ).exit_code
        == 0
    )
    r = runner.invoke(app, ["report", "validation", "--workspace", ws])
    assert r.exit_code == 0, r.output
    assert "Splits: core\n" in r.output
