"""`amg audit people`: each person's status, labels, gold accuracy, attention failures and speed,
and the adjudicator's resolutions, for open and fixed-roster audits."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentmemgate.annotate_app import annotator_queue, create_audit, queues, record_label
from agentmemgate.annotate_app.people import people_report
from agentmemgate.annotate_app.study import StudyOptions
from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

from .conftest import token_of
from .test_study import _idle, expected, source, work

runner = CliRunner()


def test_people_of_an_open_audit(tmp_path):
    p, refs = source(tmp_path, n=12)
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws,
        "crowd",
        "evidence_type",
        str(p),
        study=StudyOptions(
            overlap=2, per_person=3, gold=2, attention=1, min_gold_accuracy=0.5,
            completion_code="OK1", screenout_code="NO1",
        ),
    )  # fmt: skip
    study = made.study_link.split("study=")[1]
    want = expected(ws)
    good = queues.arrive(
        ws, study, {"PROLIFIC_PID": "GOOD", "STUDY_ID": "ST1", "SESSION_ID": "SE1"}
    )
    work(ws, good.token, lambda item: want[item])
    bad = queues.arrive(ws, study, {"PROLIFIC_PID": "BAD"})
    work(ws, bad.token, lambda item: "explicit_correction")
    slow = queues.arrive(ws, study, {"PROLIFIC_PID": "SLOW"})
    annotator_queue(ws, slow.token)
    _idle(ws, slow.name, 45)
    rep = people_report(ws, "crowd")
    by = {r.platform_id: r for r in rep.people}
    assert (by["GOOD"].status, by["GOOD"].code, by["GOOD"].labeled) == ("done", "OK1", 3)
    assert by["GOOD"].gold.k == by["GOOD"].gold.n == 2 and by["GOOD"].gold.ci_low < 1
    assert by["GOOD"].attention_failed == 0 and by["GOOD"].attention_answered == 1
    assert by["BAD"].status == "screened_out" and by["BAD"].code == "NO1"
    assert by["BAD"].reason.startswith("gold: 0 of")
    assert by["SLOW"].status == "idle" and by["SLOW"].labeled == 0
    assert rep.counts == {"working": 0, "idle": 1, "done": 1, "screened_out": 1, "full": 0}
    text = "\n".join(rep.lines())
    assert "1 idle, 1 done, 1 screened out" in text and "GOOD" in text

    res = runner.invoke(app, ["audit", "people", "crowd", "--json", "--workspace", str(ws.path)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {p["platform_id"] for p in data["people"]} == {"GOOD", "BAD", "SLOW"}
    ids = {p["platform_id"]: (p["study_id"], p["session_id"]) for p in data["people"]}
    assert ids["GOOD"] == ("ST1", "SE1") and ids["BAD"] == (None, None)  # as the link passed them
    res = runner.invoke(app, ["audit", "people", "nope", "--workspace", str(ws.path)])
    assert res.exit_code == 1 and "No audit named 'nope'" in res.output


def test_people_of_a_fixed_audit_with_resolutions(tmp_path, statements_file):
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws, "lab", "evidence_type", str(statements_file), annotators=["ana", "ben"],
        adjudicator="cat",
    )  # fmt: skip
    for who, lab in (("ana", "speculation"), ("ben", "other")):
        tok = token_of(made.links[who])
        for q in annotator_queue(ws, tok):
            record_label(ws, tok, q.display.id, lab, active_seconds=1.0 if who == "ben" else 9.0)
    item = annotator_queue(ws, token_of(made.links["ana"]))[0].display.id
    record_label(ws, token_of(made.adjudicator_link), item, "other")
    rep = people_report(ws, "lab")
    by = {r.name: r for r in rep.people}
    assert by["ana"].status == "done" and by["ana"].labeled == 4 and by["ana"].fast.k == 0
    assert by["ben"].fast.k == 4 and by["ben"].median_seconds == 1.0
    assert by["cat"].role == "adjudicator" and by["cat"].labeled == 1
    [r] = rep.resolutions
    assert r.item_id == item and r.resolution == "other" and r.adjudicator == "cat"
    assert r.labels == {"other": 1, "speculation": 1}
    assert "-> other (cat)" in "\n".join(rep.lines())
