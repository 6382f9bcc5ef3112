"""The report's "why" notes, on scripted systems whose traces say exactly what happened."""

from __future__ import annotations

import pytest

from agentmemgate.evaluate import compute_report, report_markdown, run_eval
from agentmemgate.evaluate.systems import system_spec

from .doubles import factory, info
from .test_measures import ABANDONED, CAME_TRUE, OPEN

ARCS = [ABANDONED, OPEN, CAME_TRUE]
RETRY = {"matched_by_retry": True, "evidence_type": "other"}


@pytest.fixture
def ws(ws):
    ws.save_specs([a.spec for a in ARCS])
    for a in ARCS:
        ws.save_arc(a)
    return ws


def spec(name, script, gated, twin=None):
    return system_spec(factory(script, info(name, gated, twin)))


def test_a_gated_system_above_its_twin_is_explained_from_its_traces(ws):
    # The gated system's retry matches the plan turn and the classifier calls it "other": it
    # commits Deezer; the ungated twin runs no retry and drops the same statement.
    gated = spec("g", {0: [("commit", "Pandora")], 1: [("commit", "Deezer", RETRY)]}, True, "u")
    ungated = spec("u", {0: [("commit", "Pandora")], 1: [("drop", "Deezer")]}, False)
    run_eval(ws, ["core"], [gated, ungated], show_progress=False)
    r = compute_report(ws)
    (e,) = [x for x in r.explanations if x.kind == "gated_contaminates_more"]
    at_risk = sum(a.spec.outcome in ("abandoned", "open") for a in ARCS)
    assert e.systems == ["g", "u"] and e.counts["arcs"] == at_risk
    assert e.counts["via_retry"] == at_risk and e.counts["twin_matched_no_field"] == at_risk
    assert e.counts["committed after the classifier called it other"] == at_risk
    assert "plan-frame retry" in e.text and "Section 6.3" in e.text
    md = report_markdown(r)
    assert md.index("## Summary") < md.index("## Why") < md.index("## Contamination")
    assert e.text in md
    # the came-true plan was held before it came true: a premature write, not contamination
    row = next(x for x in r.summary if x.system == "g")
    assert (row.premature_write.k, row.premature_write.n) == (1, 1)


def test_identical_systems_are_explained_turn_by_turn(ws):
    other = {"evidence_type": "other"}
    direct = spec("a", {0: [("commit", "Pandora")], 1: [("commit", "Deezer", other)]}, False)
    retried = spec("b", {0: [("commit", "Pandora")], 1: [("commit", "Deezer", RETRY)]}, False)
    different = spec("c", {0: [("commit", "Pandora")]}, False)
    run_eval(ws, ["core"], [direct, retried, different], show_progress=False)
    r = compute_report(ws)
    (e,) = [x for x in r.explanations if x.kind == "identical"]
    assert e.systems == ["a", "b"]
    n = len(ARCS)
    want = {"arcs": n, "same_outcome": n, "same_reads": n, "same_writes": n, "retry_only_b": n}
    assert {k: e.counts[k] for k in want} == want
    assert "b matched 3 writes to the field only through the plan-frame retry" in e.text
    # a system that differs in a cell is never called identical
    assert all("c" not in x.systems for x in r.explanations)
