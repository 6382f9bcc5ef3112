"""The timeline consistency check: what it catches, where it says it is, what a design adds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentmemgate.design import load_design, paper_design
from agentmemgate.design_checks import check_design
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.schema import Turn
from agentmemgate.validate import check_arc
from agentmemgate.validate.consistency import builtin_rules, consistency, rules_for

ROOT = Path(__file__).resolve().parents[2]


def _arc(outcome="open", split="core", level=None):
    specs = plan_split(split, seed=0)
    spec = next(s for s in specs if s.outcome == outcome and (level is None or s.level == level))
    return get_renderer("offline").render(spec)


def _failed(arc, design=None):
    return {r.check: r.detail for r in check_arc(arc, design) if not r.passed}


@pytest.fixture(scope="module")
def paper_arcs():
    d = paper_design()
    r = get_renderer("offline", design=d)
    return [r.render(s) for split in d.splits for s in plan_split(split, 0, design=d)]


def test_the_papers_build_raises_no_alarm(paper_arcs):
    assert len(paper_arcs) == sum(paper_design().arcs_in(s) for s in paper_design().splits)
    assert [a.id for a in paper_arcs if consistency(a)] == []


def test_an_open_plan_reported_done_fails_naming_the_turn():
    arc = _arc("open")
    ref = arc.pending_turn
    t = arc.turn(ref)
    t.text += f" Actually, scratch that: I moved over to {arc.spec.plan_value} last week."
    detail = _failed(arc)["structure.consistency"]
    assert f"session {ref.session} turn {ref.turn} (user)" in detail
    assert "still pending" in detail and "[resolved_while_pending]" in detail


def test_an_abandoned_plan_later_in_use_fails():
    arc = _arc("abandoned")
    s = arc.outcome_turn.session
    arc.sessions[s].turns += [
        Turn(role="user", text=f"Loving {arc.spec.plan_value} so far, the switch was worth it."),
        Turn(role="assistant", text="Good to hear."),
    ]
    assert "[abandoned_in_use]" in _failed(arc)["structure.consistency"]


def test_a_confirmed_change_later_denied_fails():
    arc = _arc("came_true")
    t = arc.turn(arc.outcome_turn)
    t.text += f" Kidding. I'm still with {arc.spec.initial_value}."
    detail = _failed(arc)["structure.consistency"]
    assert "[confirmed_" in detail and f"still with {arc.spec.initial_value}" in detail


def test_a_reply_congratulating_a_dropped_plan_fails():
    arc = _arc("abandoned")
    ref = arc.outcome_turn
    reply = arc.sessions[ref.session].turns[ref.turn + 1]
    reply.text = f"Congrats on making the move to {arc.spec.plan_value}!"
    detail = _failed(arc)["structure.consistency"]
    assert f"turn {ref.turn + 1} (assistant)" in detail and "[reply_done_while_open]" in detail


def test_a_date_no_turn_gave_fails_and_one_the_plan_gave_passes():
    arc = _arc("open", "controlled", "confident_no_date")
    t = arc.turn(arc.pending_turn)
    t.text = f"{arc.spec.plan_value} is still set for January 19."
    assert "[date_not_introduced]" in _failed(arc)["structure.consistency"]
    dated = _arc("open", "controlled", "scheduled_with_date")
    assert "structure.consistency" not in _failed(dated)


def test_a_consistent_addition_passes():
    arc = _arc("open")
    arc.turn(arc.pending_turn).text += f" Still haven't gotten around to {arc.spec.plan_value}."
    assert "structure.consistency" not in _failed(arc)


def _design_with_rules(tmp_path: Path, rules: str) -> Path:
    folder = tmp_path / "d"
    shutil.copytree(ROOT / "agentmemgate" / "design" / "paper", folder)
    text = (folder / "design.toml").read_text()
    text = text.replace('name = "paper"', 'name = "mine"').replace(
        'recovery = "recovery.toml"', 'recovery = "recovery.toml"\nconsistency = "consistency.toml"'
    )
    (folder / "design.toml").write_text(text)
    (folder / "consistency.toml").write_text(rules)
    return folder


def test_a_design_adds_cues_and_rules(tmp_path):
    folder = _design_with_rules(
        tmp_path,
        '[cues]\nmovers = ["the movers (came|dropped)"]\n\n[[rules]]\nname = "movers_while_open"\n'
        'role = "user"\nstates = ["pending"]\nany = ["movers"]\nsay = "says the movers came"\n',
    )
    design = load_design(folder)
    rules = rules_for(design)
    assert len(rules.rules) == len(builtin_rules().rules) + 1
    arc = _arc("open")
    arc.turn(arc.pending_turn).text += " The movers came on Tuesday."
    assert consistency(arc) is None  # the built-in rules know nothing of movers
    assert "[movers_while_open]" in consistency(arc, rules)
    assert "[movers_while_open]" in _failed(arc, design)["structure.consistency"]


def test_design_check_names_a_broken_rules_file(tmp_path):
    folder = _design_with_rules(
        tmp_path,
        '[cues]\nbad = ["(unclosed"]\n\n[[rules]]\nname = "x"\nrole = "robot"\n'
        'states = ["pending"]\nany = ["nowhere"]\n',
    )
    problems = [str(p) for p in check_design(folder)[1]]
    assert any("cues.bad#1: not a regular expression" in p for p in problems), problems
    assert any("rules#1.role" in p for p in problems), problems
    assert any("unknown cue category 'nowhere'" in p for p in problems), problems


def test_the_planted_measure_runs_and_reports_both_halves():
    r = subprocess.run(
        [sys.executable, str(ROOT / "devsets" / "timeline" / "measure.py"), "--per", "1", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(r.stdout)
    assert out["baseline"]["flagged"]["k"] == 0
    for part in ("heldout", "dev"):
        assert out[part]["all_defects"]["n"] > 0 and out[part]["consistent"]["n"] > 0
