"""The corrections split exported, validated and audited like the other splits."""

from __future__ import annotations

import json

from agentmemgate.annotate_app.sources import load_source
from agentmemgate.design import paper_design
from agentmemgate.schema import contains_value
from agentmemgate.workspace import Workspace

N_PER_CELL = 2  # the small_build fixture's


def _arcs(split: str, prefix: str = "") -> int:
    """Arcs of ``split`` in the small build (those of cells whose level starts with ``prefix``)."""
    return sum(
        n for c, n in paper_design().cell_counts(split, N_PER_CELL) if c.level.startswith(prefix)
    )


def _rows(out, split):
    return [json.loads(x) for x in (out / split / "data.jsonl").read_text().splitlines()]


def test_correction_rows_carry_their_correction_and_others_do_not(small_build):
    root, summary = small_build
    out = root / "out"
    rows = _rows(out, "corrections")
    n = _arcs("corrections")
    assert len(rows) == n and summary.structure.arcs_passing == summary.structure.arcs
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
    assert f"structure.correction_wording | {n} | {n}" in card
    assert "Blind level recovery, correction" in card
    core = (out / "core" / "README.md").read_text().split("## Fields")[0]
    design_files = [x for x in core.splitlines() if x.startswith("  - `")]  # the provenance
    assert (
        design_files
        and "correction"
        not in "\n".join(x for x in core.splitlines() if x not in design_files).lower()
    )


def test_audit_items_of_the_corrections_split_have_design_labels(small_build):
    root, _ = small_build
    ws = Workspace(root / "ws", create=False)
    items = load_source(ws, "arcs:corrections", "evidence_type")
    by_turn: dict[str, list[str]] = {}
    for it in items:
        by_turn.setdefault(it.strata["turn"], []).append(it.reference.label)
    assert set(by_turn) == {"initial", "reported_change", "correction"}
    assert set(by_turn["correction"]) == {"explicit_correction"}
    assert len(by_turn["correction"]) == _arcs("corrections")
    assert set(by_turn["reported_change"]) == {"completed_event"}
    assert len(by_turn["reported_change"]) == _arcs("corrections", "change_")
    assert set(by_turn["initial"]) == {"other"}
    diff = load_source(ws, "arcs:corrections", "difficulty")
    assert {it.reference.label for it in diff} == set(paper_design().levels("correction"))
    for it in items + diff:  # nothing the annotator sees spells the label
        assert "correction" not in it.display.id
