"""The corrections split exported, validated and audited like the other splits."""

from __future__ import annotations

import json

from agentmemgate.annotate_app.sources import load_source
from agentmemgate.schema import contains_value
from agentmemgate.workspace import Workspace


def _rows(out, split):
    return [json.loads(x) for x in (out / split / "data.jsonl").read_text().splitlines()]


def test_correction_rows_carry_their_correction_and_others_do_not(small_build):
    root, summary = small_build
    out = root / "out"
    rows = _rows(out, "corrections")
    assert len(rows) == 16 and summary.structure.arcs_passing == summary.structure.arcs
    for r in rows:
        c, ref = r["correction"], r["correction_turn"]
        assert r["outcome_turn"] == ref and r["outcome"] == "correction"
        text = r["sessions"][ref["session"]]["turns"][ref["turn"]]["text"]
        assert contains_value(text, c["value"]) and contains_value(text, c["wrong_value"])
        assert r["expected_value_after_session"][-1] == c["value"]
    for split in ("core", "heldout", "controlled"):
        assert all("correction" not in r and "correction_turn" not in r for r in _rows(out, split))
    card = (out / "corrections" / "README.md").read_text()
    assert "second control for non-speculative updates" in card
    assert "structure.correction_wording | 16 | 16" in card
    assert "Blind level recovery, correction" in card
    assert "correction" not in (out / "core" / "README.md").read_text().split("## Fields")[0].lower()


def test_audit_items_of_the_corrections_split_have_design_labels(small_build):
    root, _ = small_build
    ws = Workspace(root / "ws", create=False)
    items = load_source(ws, "arcs:corrections", "evidence_type")
    by_turn: dict[str, list[str]] = {}
    for it in items:
        by_turn.setdefault(it.strata["turn"], []).append(it.reference.label)
    assert set(by_turn) == {"initial", "reported_change", "correction"}
    assert set(by_turn["correction"]) == {"explicit_correction"} and len(by_turn["correction"]) == 16
    assert set(by_turn["reported_change"]) == {"completed_event"} and len(by_turn["reported_change"]) == 8
    assert set(by_turn["initial"]) == {"other"}
    diff = load_source(ws, "arcs:corrections", "difficulty")
    assert {it.reference.label for it in diff} == {
        "initial_same_marked", "initial_same_unmarked", "initial_later_marked",
        "initial_later_unmarked", "change_same_marked", "change_same_unmarked",
        "change_later_marked", "change_later_unmarked"}
    for it in items + diff:  # nothing the annotator sees spells the label
        assert "correction" not in it.display.id
