"""The store readers: their rules on records a product keeps, their measured figures (the
labelled snapshots of devsets/stores reproduce the figures reports quote), and the store
measures they feed."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

import pytest

from agentmemgate.evaluate.answer_scoring import score_store
from agentmemgate.evaluate.measures import ArcScore
from agentmemgate.evaluate.store_reading import (
    accuracy,
    load_cues,
    reader_for,
    valid_at,
)
from agentmemgate.evaluate.truth import truth_of

from .test_measures import ABANDONED, CAME_TRUE, OPEN

ROOT = Path(__file__).resolve().parents[2]
VALUES = ["Pandora", "Deezer"]


@pytest.mark.parametrize(
    "memory, held",
    [
        ("Uses Pandora for music", ["Pandora"]),
        ("Is considering switching from Pandora to Deezer", ["Pandora"]),
        ("Switched from Pandora to Deezer", ["Deezer"]),
        ("Replaced Pandora with Deezer", ["Deezer"]),
        ("Wants to try Deezer instead of Pandora", ["Pandora"]),
        ("Decided to stick with Pandora instead of Deezer", ["Pandora"]),
        ("Might cancel Pandora", ["Pandora"]),
        ("Cancelled Pandora", []),
        ("Deezer subscription starts next month", []),
        ("Sister uses Deezer", []),
        ("Uses Spotify", []),  # a third value is not read
    ],
)
def test_mem0_memories(memory, held):
    got = reader_for("mem0").read([{"memory": memory}], VALUES, dt.date(2024, 3, 1))
    assert got.held == held, got.records


def test_graphiti_edges_count_only_while_valid_and_plan_relations_hold_nothing():
    at = dt.date(2024, 3, 10)
    edge = {"name": "USES", "fact": "User uses Deezer", "valid_at": "2024-03-10T00:00:00Z"}
    assert valid_at(edge, at)[0]  # valid from the probe's own day
    assert not valid_at(edge | {"valid_at": "2024-03-11T00:00:00Z"}, at)[0]
    assert not valid_at(edge | {"invalid_at": "2024-03-10T00:00:00Z"}, at)[0]
    assert not valid_at(edge | {"expired_at": "2024-02-01T00:00:00+00:00"}, at)[0]
    assert valid_at(edge | {"invalid_at": "2024-04-01T00:00:00Z"}, at)[0]
    reader = reader_for("graphiti@openai:x")  # results name products NAME@model
    assert reader.read([edge], VALUES, at).held == ["Deezer"]
    planned = edge | {"name": "CONSIDERING_SWITCH_TO"}
    got = reader.read([planned], VALUES, at)
    assert got.held == [] and "names a plan" in got.records[0][1]
    assert reader.read([edge | {"name": "HAS_PLAN_WITH"}], VALUES, at).held == ["Deezer"]
    assert reader_for("full-context") is None  # no store to read


def test_the_measured_figures_are_what_the_labelled_snapshots_give():
    """store_accuracy.json (quoted by reports) is reproduced from the held-out snapshots."""
    spec = importlib.util.spec_from_file_location("measure", ROOT / "devsets/stores/measure.py")
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    figs, _ = measure.measure(measure.snapshots("heldout"))
    assert accuracy()[load_cues().ref] == figs
    rows = measure.snapshots("heldout")
    assert {r["part"] for r in rows} == {"heldout"} and len(rows) == sum(
        f["n"] for f in figs.values()
    )
    for f in figs.values():  # what a plan-exposure measure needs most: no false plan reads
        assert f["false_plan"] == 0
    dev = [
        json.loads(line) for line in (ROOT / "devsets/stores/dev.jsonl").read_text().splitlines()
    ]
    assert not {r["id"] for r in dev} & {r["id"] for r in rows}


def _score(arc, exposure: bool) -> ArcScore:
    t = truth_of(arc)
    return ArcScore(
        arc_id=t.arc_id,
        split=t.split,
        factor=t.factor,
        level=t.level,
        outcome=t.outcome,
        values={"exposure": exposure},
    )


def same(v, ref):
    return v is not None and v.lower() == ref.lower()


def test_store_measures_and_their_agreement_with_the_answers():
    # abandoned: plan in session 0, abandoned in session 1; the store held Deezer after session 0
    s = _score(ABANDONED, exposure=False)
    score_store(truth_of(ABANDONED), [["Pandora", "Deezer"], ["Pandora"]], same, s)
    assert s.values["store_pending_contamination"] is True
    assert s.values["store_end_contamination"] is False
    assert s.values["store_answer_agreement"] is False
    assert "no answer asserted it" in s.why["store_answer_agreement"]
    # open: held at the end too, and the answers said so as well
    s = _score(OPEN, exposure=True)
    score_store(truth_of(OPEN), [["Pandora"], ["Deezer"]], same, s)
    assert s.values["store_end_contamination"] and s.values["store_answer_agreement"]
    # a came-true plan is not at risk: no store contamination measures
    s = _score(CAME_TRUE, exposure=False)
    score_store(truth_of(CAME_TRUE), [["Deezer"], ["Deezer"], ["Deezer"]], same, s)
    assert not any(k.startswith("store_") for k in s.values)


# -- a product-shaped system whose store is read, end to end ---------------------------------
class _Mem0Shaped:
    """Keeps every user turn as a Mem0-style memory and answers with the last value it heard:
    its store and its answers can disagree, which is what the store reading is for."""

    def __init__(self):
        from agentmemgate.memory.answering import AnsweringSystem, ProbeAnswer
        from agentmemgate.memory.system import SystemInfo

        class System(AnsweringSystem):
            info = SystemInfo(name="mem0", description="Mem0-shaped double", gated=False)

            def begin(self, namespace):
                self.memories = []

            def ingest(self, session):
                self.memories += [f"User said: {t.text}" for t in session.turns if t.role == "user"]

            def answer(self, question, date):
                heard = [v for m in self.memories for v in VALUES if v in m]
                return ProbeAnswer(answer=f"You use {heard[-1]}." if heard else "I don't know.")

            def store_snapshot(self):
                return [{"memory": m} for m in self.memories]

        self.cls = System


def test_a_product_store_is_read_beside_its_answers(ws, monkeypatch):
    from agentmemgate.evaluate import compute_report, run_eval, show_arc
    from agentmemgate.evaluate.systems import answering_spec

    for a in (ABANDONED, OPEN):
        ws.save_specs([a.spec])
        ws.save_arc(a)
    system = _Mem0Shaped().cls
    run_eval(ws, ["core"], [answering_spec(system, info=system.info)], show_progress=False)
    rows = list(ws.db["eval_product_answers"].rows)
    assert rows and all(json.loads(r["store"]) for r in rows)
    # ABANDONED: "I might switch to Deezer." is a plan in the store, but the answer after that
    # session says "You use Deezer.": exposure from the answers, none in the store.
    report = compute_report(ws)
    stat = report.stat("mem0", "core", "store_answer_agreement")
    assert stat is not None and stat.n == 2
    row = next(x for x in report.summary if x.system == "mem0")
    assert row.pending_source == "store reads" and row.answer_end_contamination is not None
    shown = show_arc(ws, ABANDONED.id, "mem0")
    assert "Store after session 0 (3 records, read by mem0 store_cues.v1): holds 'Pandora'" in shown
    assert "the answer asserts it, the store does not hold it" in shown
    assert "store_answer_agreement: no" in shown

    # ... and the viewer's trace page shows the store beside the answer
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AMG_VIEW_WORKSPACE", str(ws.path))
    at = AppTest.from_string(
        "from agentmemgate.view.app import main\nmain('trace')", default_timeout=60
    )
    at.query_params["arc"], at.query_params["system"] = ABANDONED.id, "mem0"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    page = "\n".join(str(t.value) for t in at.text)
    assert "read by mem0 store_cues.v1" in page and "store does not hold it" in page
