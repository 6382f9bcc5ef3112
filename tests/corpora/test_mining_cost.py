"""``amg mine hedges --prefilter lexicon|none`` and its dry run (what stage 2 would cost)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import agentmemgate.corpora
from agentmemgate.cli import app
from agentmemgate.corpora import load_corpus, mine_hedges, plan_mine_hedges, scan_conversation
from agentmemgate.corpora._rules import load_rules
from agentmemgate.corpora.accuracy import measured
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.llm import get_model
from agentmemgate.run_context import run_context

from .paths import LOCOMO, LONGMEMEVAL

NO = {
    "keep": False,
    "span": None,
    "attribute": None,
    "plan_value": None,
    "hedge_level": None,
    "reason": "no plan here",
}


def _user_turns(path) -> int:
    return sum(scan_conversation(c, prefilter="none").turns_scanned for c in load_corpus(path))


def test_prefilter_none_sends_every_turn_to_stage_2(ws):
    model = get_model("scripted:every").respond_with(lambda r: NO)
    s = mine_hedges(ws, LOCOMO, miner="scripted:every", prefilter="none")
    assert s.prefilter_hits == s.turns_scanned == len(model.history) == _user_turns(LOCOMO)
    assert s.prefilter_lines[0].startswith("Prefilter: none")
    assert "no keyword filter ran" in model.history[0].prompt
    lexicon = mine_hedges(ws, LOCOMO, miner="offline")
    assert lexicon.prefilter_hits < s.turns_scanned  # the lexicon passes on only some turns
    assert lexicon.prefilter_lines[0].startswith(f"Prefilter: lexicon {load_lexicon().ref}")


def test_summary_states_the_measured_held_out_precision_and_recall(ws):
    """The offline miner's figures come from the stored held-out measurement (never retyped)."""
    entry = measured(load_lexicon(), load_rules())
    assert entry is not None, "re-run devsets/hedges/measure.py --set unseen --save"
    part = entry["parts"]["longmemeval"]
    s = mine_hedges(ws, LONGMEMEVAL)
    lines = "\n".join(s.lines())
    assert f"Accuracy on held-out {part['data']}:" in lines
    for name in ("precision", "recall", "prefilter_recall"):
        assert f"{part[name]['k']}/{part[name]['n']} = " in lines
    assert all(len(line) <= 100 for line in s.lines())
    lo = mine_hedges(ws, LOCOMO)
    assert entry["parts"]["locomo"]["data"] in "\n".join(lo.lines())
    v1 = Path(agentmemgate.corpora.__file__).parent / "cues.v1.toml"
    own = mine_hedges(ws, LONGMEMEVAL, lexicon=v1)
    assert "Accuracy: not measured for this lexicon" in "\n".join(own.lines())


def test_an_llm_miner_is_not_credited_with_the_offline_figures(ws):
    get_model("scripted:acc").respond_with(lambda r: NO)
    s = mine_hedges(ws, LONGMEMEVAL, miner="scripted:acc")
    lines = "\n".join(s.lines())
    assert "precision and recall are not measured here" in lines
    assert "prefilter recall: " in lines and "(precision)" not in lines


def test_dry_run_counts_stage_2_calls_and_cost_and_stores_nothing(tmp_path):
    ws = tmp_path / "ws"
    runner = CliRunner()
    get_model("scripted:dry").respond_with(lambda r: NO)
    r = runner.invoke(
        app,
        [
            "mine",
            "hedges",
            str(LOCOMO),
            "--miner",
            "scripted:dry",
            "--prefilter",
            "none",
            "--dry-run",
            "--price",
            "1,2",
            "--workspace",
            str(ws),
        ],
    )
    assert r.exit_code == 0, r.output
    turns = _user_turns(LOCOMO)
    assert f"{turns} go to stage 2" in r.output
    assert f"scripted:dry: {turns} planned calls;" in r.output
    assert "estimated cost at most $" in r.output and "(price from --price)" in r.output
    assert not ws.exists()  # nothing stored, no workspace left behind
    assert get_model("scripted:dry").history == []  # nothing sent
    # after a real run the same dry run plans no call: every answer is cached
    r = runner.invoke(
        app,
        [
            "mine",
            "hedges",
            str(LOCOMO),
            "--miner",
            "scripted:dry",
            "--prefilter",
            "none",
            "--workspace",
            str(ws),
        ],
    )
    assert r.exit_code == 0, r.output
    assert (
        "Prefilter: none" in r.output
        and "scripted:dry: " in r.output
        and "cost unknown: no price for this model" in r.output
    )
    r = runner.invoke(
        app,
        [
            "mine",
            "hedges",
            str(LOCOMO),
            "--miner",
            "scripted:dry",
            "--prefilter",
            "none",
            "--dry-run",
            "--workspace",
            str(ws),
        ],
    )
    assert (
        f"scripted:dry: 0 planned calls ({turns} answered from the workspace cache or by an "
        "identical call before them)"
    ) in r.output


def test_the_plan_counts_what_a_run_would_send_and_stores_nothing(ws):
    """``plan_mine_hedges`` takes ``mine_hedges``'s arguments and returns what ``--dry-run``
    prints; after the run, the same plan counts no call (every answer is stored)."""
    model = get_model("scripted:plan").respond_with(lambda r: NO)
    how = dict(miner="scripted:plan", prefilter="none")
    with run_context(dry_run=True) as run:
        plan = plan_mine_hedges(ws, LOCOMO, **how)
    turns = _user_turns(LOCOMO)
    assert (plan.corpus, plan.turns_scanned, plan.stage2) == ("locomo", turns, turns)
    assert plan.lines()[0] == (
        f"dry run: 2 conversations (locomo), {turns} turns scanned, {turns} go to stage 2"
    )
    assert [m.planned.calls for m in run.models] == [turns] and model.history == []
    assert ws.db["mine_sources"].count == 0
    assert mine_hedges(ws, LOCOMO, **how).turns_scanned == len(model.history) == turns
    with run_context(dry_run=True) as run:
        assert plan_mine_hedges(ws, LOCOMO, **how).stage2 == turns
    assert [m.planned.calls for m in run.models] == [0]  # every answer is stored


def test_bad_prefilter_is_one_line(tmp_path):
    r = CliRunner().invoke(
        app,
        ["mine", "hedges", str(LOCOMO), "--prefilter", "llm", "--workspace", str(tmp_path / "ws")],
    )
    assert r.exit_code == 1
    assert r.output.strip().splitlines()[0] == (
        "Error: Unknown --prefilter 'llm': choose lexicon or none"
    )
