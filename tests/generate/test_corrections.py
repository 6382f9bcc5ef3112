"""The corrections split: planner cells, offline rendering, phrase banks, and that the paper's
three splits do not move when it is built."""

from __future__ import annotations

import filecmp
import re
from collections import Counter

import pytest

from agentmemgate.design import paper_design
from agentmemgate.generate import get_renderer, plan_split, resolve_splits
from agentmemgate.generate.offline import bank_sha256, correction_bank
from agentmemgate.schema import CORRECTION_MARKER_PHRASES, contains_value, normalize_text
from agentmemgate.validate import check_arc
from agentmemgate.validate.judges import get_judge
from agentmemgate.validate.judges.questions import realism_question
from agentmemgate.validate.structure import CHANGE_SINCE

CORRECTION_LEVELS = paper_design().levels("correction")
PAPER_SPLITS = paper_design().resolve_splits("paper")
SPLITS = paper_design().split_names


def _has(text: str, phrases) -> str | None:
    norm = f" {normalize_text(text)} "
    return next((p for p in phrases if f" {normalize_text(p)} " in norm), None)


def _render(seed=0, n=None):
    r = get_renderer("offline")
    return [r.render(s) for s in plan_split("corrections", seed, n)]


def _flat_position(arc, ref):
    return sum(len(s.turns) for s in arc.sessions[: ref.session]) + ref.turn


def test_planner_cells_and_counts():
    specs = plan_split("corrections", 0)
    assert len(specs) == paper_design().arcs_in("corrections")
    assert Counter(s.level for s in specs) == {lv: 15 for lv in CORRECTION_LEVELS}
    for s in specs:
        c = s.correction
        assert (s.split, s.factor, s.outcome) == ("corrections", "correction", "correction")
        assert s.level == f"{c.target}_{c.timing}_{c.marker}"
        if c.target == "initial":
            assert (c.wrong_value, c.value) == (s.initial_value, s.plan_value)
        else:  # a reported change to plan_value, corrected to a third value
            assert c.wrong_value == s.plan_value
            assert len({s.initial_value, s.plan_value, c.value}) == 3
            assert len(s.session_dates) >= (3 if c.timing == "later" else 2)
        assert not s.field.leaked_values(s.label_values)
    assert [s.model_dump_json() for s in plan_split("corrections", 0)] == [
        s.model_dump_json() for s in specs
    ]
    assert Counter(s.level for s in plan_split("corrections", 0, 2)) == {
        lv: 2 for lv in CORRECTION_LEVELS
    }
    assert resolve_splits("all") == list(SPLITS) == list(PAPER_SPLITS) + ["corrections"]


def test_paper_specs_carry_no_correction_and_corrections_come_after_them():
    for split in PAPER_SPLITS:
        spec = plan_split(split, 0, 1)[0]
        assert spec.correction is None and '"correction"' not in spec.model_dump_json()
    last = {}
    for split in PAPER_SPLITS:
        for s in plan_split(split, 0):
            last[s.domain] = max(last.get(s.domain, -1), s.domain_index)
    assert all(s.domain_index > last.get(s.domain, -1) for s in plan_split("corrections", 0))


@pytest.mark.parametrize("seed", [0, 1])
def test_every_offline_correction_arc_passes_its_checks_and_realizes_its_cell(seed):
    for arc in _render(seed):
        assert all(r.passed for r in check_arc(arc)), [r for r in check_arc(arc) if not r.passed]
        assert {r.check for r in check_arc(arc)} >= {
            "structure.correction_values",
            "structure.correction_order",
            "structure.correction_wording",
        }
        c, ref = arc.spec.correction, arc.correction_turn
        text = arc.turn(ref).text
        assert contains_value(text, c.value) and contains_value(text, c.wrong_value)
        marker = _has(text, CORRECTION_MARKER_PHRASES)
        assert (marker is not None) == (c.marker == "marked"), text
        said = arc.initial_turn if c.target == "initial" else arc.plan_turn
        assert contains_value(arc.turn(said).text, c.wrong_value)
        assert (ref.session == said.session) == (c.timing == "same")
        assert _flat_position(arc, ref) > _flat_position(arc, said)
        assert arc.outcome_turn == ref
        assert (arc.plan_turn == ref) == (c.target == "initial")
        expected = [
            c.value
            if s >= ref.session
            else (
                arc.spec.plan_value
                if c.target == "change" and s >= arc.plan_turn.session
                else arc.spec.initial_value
            )
            for s in range(len(arc.sessions))
        ]
        assert arc.expected_value_after_session == expected
        assert arc.provenance.prompt_sha256 == bank_sha256(corrections=True) != bank_sha256()


def test_a_corrections_build_passes_every_offline_realism_check():
    arcs = _render(0)
    judge = get_judge("offline")
    questions = [realism_question(a) for a in arcs]
    judge.prepare(questions)
    failed = [
        f"{a.id} {k}: {v.rationale}"
        for a, q in zip(arcs, questions)
        for k, v in judge.ask(q).criteria.items()
        if not v.passed
    ]
    assert not failed, failed[:5]


def test_correction_phrase_banks():
    bank = correction_bank()
    slots_known = {
        "wrong",
        "right",
        "current_right",
        "switched_wrong",
        "switched_right",
        "said_when",
        "noun",
        "change",
        "you_current_right",
        "tip",
    }
    for key in ("initial_marked", "initial_unmarked", "change_marked", "change_unmarked"):
        frames = bank[key]
        assert len(set(frames)) >= 8, key
        for t in frames:
            slots = {s[:1].lower() + s[1:] for s in re.findall(r"\{(\w+)\}", t)}
            assert slots <= slots_known, (key, t)
            assert "said_when" in slots and slots & {"wrong", "switched_wrong"}, t
            assert slots & {"right", "current_right", "switched_right"}, t
            marker = _has(t.replace("{", " ").replace("}", " "), CORRECTION_MARKER_PHRASES)
            assert (marker is not None) == key.endswith("_marked"), (t, marker)
            assert _has(t, CHANGE_SINCE) is None, t
    for t in bank["reply"]:  # every assistant sentence carries a slot that differs by domain
        for sentence in re.split(r"(?<=[.!?])\s+", t):
            assert re.search(r"\{(wrong|right|you_current_right|noun|tip|Tip)\}", sentence), (
                sentence
            )
    design = paper_design()  # outside the phrase folder: the other arcs' hash stays
    assert not design.files.correction_phrases.startswith(design.files.phrases)


def test_the_paper_splits_are_byte_identical_with_or_without_the_corrections_split(tmp_path):
    from agentmemgate.pipeline import build

    for split in ("paper", "all"):
        root = tmp_path / split
        build(root / "ws", root / "out", split=split, n_per_cell=1, show_progress=False)
    assert not (tmp_path / "paper" / "out" / "corrections").exists()
    for s in PAPER_SPLITS:
        a, b = tmp_path / "paper" / "out" / s, tmp_path / "all" / "out" / s
        names = sorted(p.name for p in a.iterdir())
        assert names == sorted(p.name for p in b.iterdir())
        match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        assert not mismatch and not errors, (s, mismatch)
    assert (tmp_path / "all" / "out" / "corrections" / "data.jsonl").is_file()
