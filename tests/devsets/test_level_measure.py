"""``devsets/levels/measure.py``: the held-out recovery measure works for any design, and refuses
one whose levels its statements do not cover."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import load_design

ROOT = Path(__file__).resolve().parents[2]
MEASURE = ROOT / "devsets" / "levels" / "measure.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(MEASURE), *args], capture_output=True, text=True)


def a_design_with_a_new_level(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    res = CliRunner().invoke(app, ["design", "init", str(d), "--from", "paper"])
    assert res.exit_code == 0, res.output
    text = (d / "design.toml").read_text()
    text = text.replace(
        '[[factors.hedge_strength.levels]]\nname = "confident_no_date"',
        '[[factors.hedge_strength.levels]]\nname = "deadline_bound"\ngroup = "committed"\n'
        'definition = "The user has set a deadline to change by."\n\n'
        '[[factors.hedge_strength.levels]]\nname = "confident_no_date"',
    )
    (d / "design.toml").write_text(text)
    assert "deadline_bound" in load_design(d).levels("hedge_strength")
    return d


@pytest.mark.slow
def test_every_level_of_the_paper_is_measured():
    r = run("--json")
    assert r.returncode == 0, r.stderr
    import json

    out = json.loads(r.stdout)
    assert out["levels"] == list(load_design("paper").levels("hedge_strength"))
    assert out["overall"]["n"] == 12 * len(out["levels"])


def test_a_level_without_statements_is_refused_in_one_line(tmp_path):
    d = a_design_with_a_new_level(tmp_path)
    r = run("--design", str(d))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "deadline_bound" in r.stderr and "--statements" in r.stderr


def test_statements_of_ones_own_cover_a_new_level(tmp_path):
    d = a_design_with_a_new_level(tmp_path)
    mine = tmp_path / "mine.tsv"
    mine.write_text(
        "level\tdomain\ttext\n"
        "deadline_bound\tgym\tI want to be at a new gym by the end of March at the latest.\n"
        "deadline_bound\tbank\tMy cut-off for moving my account is the first of next month.\n"
    )
    r = run("--design", str(d), "--statements", str(mine))
    assert r.returncode == 0, r.stderr
    assert "deadline_bound" in r.stdout and "hedge_statements.tsv + mine.tsv" in r.stdout
    bad = run("--design", str(d), "--statements", str(tmp_path / "nope.tsv"))
    assert bad.returncode == 1 and "No statements file" in bad.stderr
