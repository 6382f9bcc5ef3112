"""`amg audit labels`: one final label per item (majority, Dawid-Skene, MACE), its support and
confidence, the adjudicator's override, screened-out people left out, and final labels as a
statement set's reference labels."""

from __future__ import annotations

import csv
import json
import sys

import pytest
from typer.testing import CliRunner

from agentmemgate.annotate_app import annotator_queue, create_audit, record_label
from agentmemgate.annotate_app.final_labels import final_labels, to_statements, write_final_labels
from agentmemgate.cli import app
from agentmemgate.errors import BadInput
from agentmemgate.workspace import Workspace

from .conftest import token_of

runner = CliRunner()
TRUTH = ["speculation", "other", "completed_event", "speculation", "other", "speculation"]


def lab_audit(tmp_path, people=("ana", "ben", "cy", "spam"), adjudicator=None, name="lab"):
    """A fixed audit of six statements; every person labels every item."""
    src = tmp_path / f"{name}.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"S{i}", "text": f"statement {i}", "reference": t}) + "\n"
            for i, t in enumerate(TRUTH)
        )
    )
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws, name, "evidence_type", str(src), annotators=list(people), adjudicator=adjudicator
    )
    return ws, made


def label_all(ws, made, person, answer):
    tok = token_of(made.links[person])
    for q in annotator_queue(ws, tok):
        record_label(ws, tok, q.display.id, answer(q.display.id))


def truth(item: str) -> str:
    return TRUTH[int(item[1:])]


def test_majority_with_support_confidence_ties_and_the_adjudicator(tmp_path):
    ws, made = lab_audit(tmp_path, people=("ana", "ben"), adjudicator="dee")
    label_all(ws, made, "ana", truth)
    label_all(ws, made, "ben", lambda i: truth(i) if i != "S1" else "speculation")
    res = final_labels(ws, "lab")
    by = {x.item_id: x for x in res.items}
    assert by["S0"].label == "speculation" and by["S0"].confidence == 1.0
    assert by["S0"].support == {"speculation": 2} and by["S0"].labels == {
        "ana": "speculation",
        "ben": "speculation",
    }
    assert by["S1"].label is None and by["S1"].confidence == 0.5  # a tie: no final label
    assert "1 ties without a final label" in "\n".join(res.lines())
    record_label(ws, token_of(made.adjudicator_link), "S1", "other")
    by = {x.item_id: x for x in final_labels(ws, "lab").items}
    assert (by["S1"].label, by["S1"].method) == ("other", "adjudicated")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dawid-skene", "mace"])
def test_models_weigh_people_by_how_reliable_they_look(tmp_path, method):
    """Three people who agree with the truth and one who answers at random: the model's final
    labels are the truth, each with its posterior as the confidence."""
    pytest.importorskip("crowdkit")
    import random

    ws, made = lab_audit(tmp_path)
    for p in ("ana", "ben", "cy"):
        label_all(ws, made, p, truth)
    rng = random.Random(3)
    label_all(ws, made, "spam", lambda i: rng.choice(["other", "speculation", "completed_event"]))
    res = final_labels(ws, "lab", method)
    assert {x.item_id: x.label for x in res.items} == {f"S{i}": t for i, t in enumerate(TRUTH)}
    assert all(0.5 < x.confidence <= 1 for x in res.items)
    assert all(x.method == method and x.n_labels == 4 for x in res.items)


def test_a_method_whose_extra_is_missing_is_refused_in_one_line(tmp_path, monkeypatch):
    ws, made = lab_audit(tmp_path, people=("ana",))
    label_all(ws, made, "ana", truth)
    monkeypatch.setitem(sys.modules, "crowdkit", None)  # as if the extra were not installed
    with pytest.raises(BadInput) as e:
        final_labels(ws, "lab", "mace")
    assert "pip install 'agentmemgate[crowd]'" in str(e.value) and "\n" not in str(e.value)
    assert final_labels(ws, "lab", "majority").items  # majority needs nothing more
    with pytest.raises(BadInput, match="Unknown method 'vote'"):
        final_labels(ws, "lab", "vote")


def test_screened_out_people_are_left_out_unless_asked(tmp_path):
    from agentmemgate.annotate_app import queues
    from agentmemgate.annotate_app.study import StudyOptions

    from .test_study import expected, source, work

    p, refs = source(tmp_path, n=9)
    ws = Workspace(tmp_path / "w2")
    made = create_audit(
        ws, "o", "evidence_type", str(p),
        study=StudyOptions(overlap=1, per_person=3, gold=1, min_gold_accuracy=1.0),
    )  # fmt: skip
    study = made.study_link.split("study=")[1]
    want = expected(ws)
    bad = queues.arrive(ws, study, {"PROLIFIC_PID": "bad"})
    work(ws, bad.token, lambda i: "explicit_correction")
    good = queues.arrive(ws, study, {"PROLIFIC_PID": "good"})
    work(ws, good.token, lambda i: want[i])
    res = final_labels(ws, "o")
    assert res.screened_left_out == 1 and res.n_people == 1
    assert all(x.labels.keys() == {"p0002"} for x in res.items)
    assert not {x.item_id for x in res.items} & {i for i in want if i not in refs}  # no checks
    everyone = final_labels(ws, "o", include_screened=True)
    assert everyone.n_people == 2 and everyone.screened_left_out == 0


def test_final_labels_as_csv_jsonl_and_a_statement_sets_references(tmp_path):
    from agentmemgate.corpora.statements import import_statements, load_set

    stm = tmp_path / "set.jsonl"
    stm.write_text(
        "".join(json.dumps({"id": f"S{i}", "text": f"statement {i}"}) + "\n" for i in range(6))
    )
    ws = Workspace(tmp_path / "ws")
    import_statements(ws, "mine", stm)
    made = create_audit(
        ws, "crowd", "evidence_type", "statements:mine@all", annotators=["ana", "ben"]
    )
    for p in ("ana", "ben"):
        label_all(ws, made, p, lambda i: truth(i) if i != "S5" else "cant_tell")
    res = final_labels(ws, "crowd")
    paths = [write_final_labels(res, tmp_path / f"final.{ext}") for ext in ("csv", "jsonl")]
    rows = list(csv.DictReader(paths[0].open()))
    assert [r["item_id"] for r in rows] == [x.item_id for x in res.items]
    assert json.loads(paths[1].read_text().splitlines()[0])["support"] == res.items[0].support
    with pytest.raises(BadInput, match=r"must end in \.csv or \.jsonl"):
        write_final_labels(res, tmp_path / "final.txt")

    done = to_statements(ws, res, "mine")
    assert done.updated == 5 and done.skipped["can't tell"] == 1 and not done.replaced
    refs = {s.id: (s.reference, s.reference_status) for s in load_set(ws, "mine")}
    assert refs["S0"] == ("speculation", "human") and refs["S5"] == (None, None)

    # a second audit that disagrees replaces those labels, and says how many and whose
    again = create_audit(
        ws, "crowd2", "evidence_type", "statements:mine@all", annotators=["cy", "dee"]
    )
    for p in ("cy", "dee"):
        label_all(ws, again, p, lambda i: "other" if i in ("S0", "S1") else truth(i))
    changed = sum(truth(i) != "other" for i in ("S0", "S1"))
    done = to_statements(ws, final_labels(ws, "crowd2"), "mine")
    assert done.replaced == {"audit:crowd:majority": changed}
    assert f"changed {changed} earlier reference labels (" in "\n".join(done.lines())

    res = runner.invoke(
        app,
        ["audit", "labels", "crowd", "--to-statements", "nope", "--workspace", str(ws.path)],
    )
    assert res.exit_code == 1 and "nope" in res.output


def test_the_cli_prints_writes_and_refuses_what_does_not_fit(tmp_path):
    ws, made = lab_audit(tmp_path, people=("ana", "ben"))
    label_all(ws, made, "ana", truth)
    label_all(ws, made, "ben", truth)
    w = str(ws.path)
    res = runner.invoke(app, ["audit", "labels", "lab", "--workspace", w])
    assert res.exit_code == 0, res.output
    assert "6 final evidence_type labels by majority from 2 people" in res.output
    res = runner.invoke(
        app,
        ["audit", "labels", "lab", "--json", "--out", str(tmp_path / "f.csv"), "--workspace", w],
    )
    assert res.exit_code == 0 and json.loads(res.stdout)["method"] == "majority"
    assert (tmp_path / "f.csv").is_file()
    res = runner.invoke(app, ["audit", "labels", "lab", "--to-statements", "x", "--workspace", w])
    assert res.exit_code == 1 and "Error:" in res.output


def test_an_audit_nobody_has_labeled_yet_is_refused_in_one_line(tmp_path):
    ws, made = lab_audit(tmp_path, people=("ana", "ben"))
    with pytest.raises(BadInput, match="has no labels yet"):
        final_labels(ws, made.name)
    res = runner.invoke(app, ["audit", "labels", made.name, "--workspace", str(ws.path)])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
