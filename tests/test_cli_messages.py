"""What users read: usage errors, size limits, generator choices, the build summary in a log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import paper_design
from agentmemgate.generate import plan_split

runner = CliRunner()


@pytest.mark.parametrize(
    "args, error, hint",
    [
        (["build", "--seed", "abc"], "Invalid value for '--seed'", "amg build"),
        (["build", "--sed", "3"], "No such option: --sed", "amg build"),
        (["build", "--split"], "Option '--split' requires an argument.", "amg build"),
        (["bild"], "No such command 'bild'. Did you mean 'build'?", "amg"),
        (["audit", "create"], "Missing argument", "amg audit create"),
        (["report", "agreement"], "Missing argument", "amg report agreement"),
        (
            ["audit", "create", "a", "--task", "realism", "--from", "arcs", "--sample", "many"],
            "Invalid value for '--sample'",
            "amg audit create",
        ),
    ],
)
def test_usage_errors_are_one_line_and_the_help_hint(tmp_path, args, error, hint):
    res = runner.invoke(app, args, prog_name="amg")
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert len(lines) == 2, res.output
    assert lines[0].startswith("Error: ") and error in lines[0]
    assert lines[1] == f"Try '{hint} --help' for help."
    assert not set(res.output) & set("╭╮╰╯│─"), "boxed panel"
    assert list(tmp_path.iterdir()) == []


def test_help_still_works_and_a_bare_group_shows_its_help():
    assert runner.invoke(app, ["build", "--help"]).exit_code == 0
    res = runner.invoke(app, ["audit"])
    assert res.exit_code == 1 and "create" in res.output and "relink" in res.output


def test_n_per_cell_beyond_the_catalog_names_the_largest_that_works(tmp_path):
    res = runner.invoke(
        app,
        [
            "build",
            "--split",
            "controlled",
            "--n-per-cell",
            "1000",
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    assert res.exit_code == 1
    m = re.fullmatch(
        r"Error: --n-per-cell 1000 is more than the catalog can fill for split "
        r"'controlled': the largest value that works there is (\d+) \(each arc needs "
        r"an unused attribute, initial and plan value\)\n",
        res.output,
    )
    assert m, res.output
    best = int(m.group(1))
    assert len(plan_split("controlled", 0, best)) == paper_design().arcs_in(
        "controlled", best
    )  # that value works
    with pytest.raises(Exception, match=f"--n-per-cell {best + 1} is more"):
        plan_split("controlled", 0, best + 1)
    assert not (tmp_path / "ws").exists()


def test_generator_choices_list_only_what_a_user_may_pick():
    res = runner.invoke(app, ["build", "--generator", "gpt4"])
    assert res.exit_code == 1
    assert res.output.strip().endswith("choose from: offline, anthropic:MODEL, openai:MODEL")
    assert "scripted" not in res.output


def test_build_summary_reads_well_at_80_columns_in_a_plain_log(tmp_path):
    amg = Path(sys.executable).with_name("amg")
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    r = subprocess.run(
        [
            str(amg),
            "build",
            "--split",
            "controlled",
            "--n-per-cell",
            "1",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )  # stdout is a pipe: no terminal
    assert r.returncode == 0, r.stderr
    lines = [line.rstrip() for line in r.stdout.splitlines()]
    assert all(len(line) <= 80 for line in lines if str(tmp_path) not in line)
    assert not [line for line in lines if re.fullmatch(r"\s*[\d/.,%]+\)?", line)], r.stdout
    assert "rendered now: 9, already done: 0, render failures: 0" in lines
    assert "structural checks: 9/9 arcs pass" in lines
    assert "asked now 18: 18 answered, 0 judge failures; already stored 0" in lines
    assert any(re.fullmatch(r"\s*controlled\s+total\s+9", line) for line in lines)
    assert f"exported to {tmp_path / 'out'}: controlled 9" in lines


def test_license_is_an_spdx_string_with_license_files():
    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"]
