"""``amg build --dry-run`` counts the judge calls the run would make, not only the generator's."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import get_model

from .test_validate_cli import scripted

runner = CliRunner()


def build(tmp_path, *extra):
    return runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "2",
            "--no-progress",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],
    )


def test_dry_run_counts_judge_calls_and_matches_the_real_run(tmp_path):
    judge = scripted("counted")
    dry = build(tmp_path, "--judge", judge, "--judge", "offline", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines()[:4] == [
        "dry run: 6 arcs planned, 6 to render, 12 model calls",
        "  generator: 0",
        "  judge scripted:counted: 12",  # 6 arcs x (realism, blind recovery)
        "  judge offline: 0 (heuristic, no model calls)",
    ]
    # tokens and cost per model; judging arcs not rendered yet cannot be estimated, and says so
    assert dry.output.splitlines()[4:] == [
        "scripted:counted: 12 planned calls; cost unknown: no price for this model; pass --price "
        "IN,OUT",
        "  12 of the calls are on input not made yet (arcs still to render, answers still to "
        "give): not in the token and cost estimate",
    ]
    assert not (tmp_path / "ws").exists()  # a dry run changes nothing

    real = build(tmp_path, "--judge", judge, "--judge", "offline")
    assert real.exit_code == 0, real.output
    assert len(get_model(judge).history) == 12  # what the dry run said

    again = build(tmp_path, "--judge", judge, "--dry-run")
    assert again.output.splitlines()[:3] == [
        "dry run: 6 arcs planned, 0 to render, 0 model calls",
        "  generator: 0",
        "  judge scripted:counted: 0",
    ]
    replanned = build(tmp_path, "--judge", judge, "--seed", "5", "--dry-run")
    assert "  judge scripted:counted: 12" in replanned.output.splitlines()


def test_dry_run_counts_llm_generator_and_judge_together(tmp_path):
    res = build(
        tmp_path,
        "--generator",
        "scripted:gen",
        "--judge",
        scripted("other"),
        "--allow-same-family",
        "--dry-run",
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[:3] == [
        "dry run: 6 arcs planned, 6 to render, 18 model calls",
        "  generator: 6",
        "  judge scripted:other: 12",
    ]
    out = res.output
    assert "scripted:gen: 6 planned calls; cost unknown" in out
    assert "at most 24,576 output tokens" in out  # 6 arcs x the generator's 4096-token budget


def test_validate_then_the_report_shows_the_judges_tokens_and_cost(tmp_path):
    judge = scripted("priced")
    assert build(tmp_path).exit_code == 0
    ws = str(tmp_path / "ws")
    dry = runner.invoke(
        app,
        [
            "validate",
            "--judge",
            judge,
            "--checks",
            "recovery",
            "--price",
            "1,2",
            "--dry-run",
            "--workspace",
            ws,
        ],
    )
    assert dry.exit_code == 0, dry.output
    assert (
        "dry run: 6 judge calls" in dry.output and "scripted:priced: 6 planned calls;" in dry.output
    )
    real = runner.invoke(
        app,
        [
            "validate",
            "--judge",
            judge,
            "--checks",
            "recovery",
            "--price",
            "1,2",
            "--no-progress",
            "--workspace",
            ws,
        ],
    )
    assert real.exit_code == 0, real.output
    line = next(x for x in real.output.splitlines() if x.startswith("scripted:priced: "))
    assert line.startswith("scripted:priced: 6 calls; cost $") and "(price from --price)" in line
    from agentmemgate.llm.cost import money
    from agentmemgate.llm.usage_log import usage_rows
    from agentmemgate.workspace import Workspace

    usage = usage_rows(Workspace(ws, create=False))
    cost = usage["total"]["cost_usd"]
    assert cost == pytest.approx(
        (usage["total"]["input_tokens"] * 1 + usage["total"]["output_tokens"] * 2) / 1e6
    )
    report = runner.invoke(app, ["report", "validation", "--workspace", ws])
    assert (
        f"- scripted:priced: 6 calls, {usage['total']['input_tokens']:,} input tokens "
        f"(0 provider-cached), {usage['total']['output_tokens']:,} output tokens; {money(cost)}"
        in report.output
    )
